//! The explanations' Markdown as plain text, for terminals and clients without Markdown:
//! no `**`, backquotes or fences, tables as aligned columns, links as their text.

/// Plain text for `markdown` (the subset the explanations use).
pub fn to_plain(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut table: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            flush_table(&mut table, &mut out);
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if is_table_row(line) {
            table.push(line);
            continue;
        }
        flush_table(&mut table, &mut out);
        out.push_str(&inline(line));
        out.push('\n');
    }
    flush_table(&mut table, &mut out);
    if !markdown.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

fn is_table_row(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 2 && t.starts_with('|') && t.ends_with('|')
}

/// `|---|:--:|` and the like.
fn is_alignment_row(cells: &[String]) -> bool {
    cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

/// Emits the collected table rows as columns separated by two spaces; a column whose
/// alignment cell ends in `:` is right-aligned.
fn flush_table(rows: &mut Vec<&str>, out: &mut String) {
    if rows.is_empty() {
        return;
    }
    let split = |row: &str| -> Vec<String> {
        let t = row.trim();
        let inner = &t[1..t.len() - 1];
        inner.split('|').map(|c| c.trim().to_string()).collect()
    };
    let mut cells: Vec<Vec<String>> = rows.iter().map(|r| split(r)).collect();
    let mut right = Vec::new();
    if cells.len() > 1 && is_alignment_row(&cells[1]) {
        right = cells[1].iter().map(|c| c.ends_with(':')).collect();
        cells.remove(1);
    }
    let cells: Vec<Vec<String>> =
        cells.into_iter().map(|row| row.iter().map(|c| inline(c)).collect()).collect();
    let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in &cells {
        for (i, c) in row.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    for row in &cells {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - c.chars().count());
            if right.get(i).copied().unwrap_or(false) {
                line.push_str(&pad);
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    rows.clear();
}

/// Inline Markdown: drops `**` and backquotes, turns `[text](target)` into `text`.
fn inline(line: &str) -> String {
    let line = line.replace("**", "").replace('`', "");
    let mut out = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let target = &after[close + 2..];
            target.find(')').map(|end| (close, close + 2 + end + 1))
        });
        match link {
            Some((close, skip)) if !after[..close].contains('[') => {
                out.push_str(&rest[..open]);
                out.push_str(&after[..close]);
                rest = &after[skip..];
            }
            _ => {
                out.push_str(&rest[..open + 1]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::to_plain;
    use expect_test::expect;

    #[test]
    fn markdown_to_plain() {
        let md = "**sharding** of `%arg0` · `tensor<8xf32>`\n\n```mlir\n#sdy.sharding<@mesh, [{\"x\"}]>\n```\n\n| dim | size | axes |\n|---:|---:|---|\n| 0 | 8 | `\"x\"` |\n| 10 | 16 | — |\n\n- see [the mesh](file:///a.mlir#L1) and [x]\n";
        expect![[r#"
            sharding of %arg0 · tensor<8xf32>

            #sdy.sharding<@mesh, [{"x"}]>

            dim  size  axes
              0     8  "x"
             10    16  —

            - see the mesh and [x]
        "#]]
        .assert_eq(&to_plain(md));
    }

    #[test]
    fn keeps_a_missing_final_newline_missing() {
        assert_eq!(to_plain("`a`"), "a");
        assert_eq!(to_plain(""), "");
        assert_eq!(to_plain("|x|"), "x");
    }
}
