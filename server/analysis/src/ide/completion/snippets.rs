//! Snippet text: escaping literal text, and plain text for clients without snippets.

/// A snippet as plain text, for clients without snippet support: each placeholder
/// becomes its default (a choice its first option), tab stops disappear (and a line
/// left with spaces only is emptied).
pub fn snippet_to_plain(snippet: &str) -> String {
    let plain = plain_text(snippet);
    let lines: Vec<&str> =
        plain.split('\n').map(|l| if l.trim().is_empty() { "" } else { l }).collect();
    lines.join("\n")
}

fn plain_text(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    let mut chars = snippet.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                match chars.next() {
                    Some(':') => {
                        // The default, up to the matching `}` (placeholders may nest).
                        let inner: String = take_braced(&mut chars);
                        out.push_str(&plain_text(&inner));
                    }
                    Some('|') => {
                        let choices: String = take_braced(&mut chars);
                        let first = choices.trim_end_matches('|').split(',').next().unwrap_or("");
                        out.push_str(first);
                    }
                    _ => {}
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The text up to the `}` closing an already opened `${`, escapes kept.
fn take_braced(chars: &mut std::iter::Peekable<std::str::Chars>) -> String {
    let mut depth = 1;
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
            }
            '{' => {
                depth += 1;
                out.push(c);
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes snippet syntax in literal text.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '$' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
