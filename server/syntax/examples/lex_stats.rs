fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let toks = sdy_syntax::lexer::lex(&text);
        let dt = t.elapsed();
        println!(
            "lex: {} tokens, {:.1} ms, {:.0} MB/s",
            toks.len(),
            dt.as_secs_f64() * 1e3,
            text.len() as f64 / dt.as_secs_f64() / 1e6
        );
    }
}
