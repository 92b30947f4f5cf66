//! Recognising when interactive input forms complete statements.

/// Lexical state while scanning SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Code,
    Quoted(char),
    LineComment,
    BlockComment,
}

/// True when `input` ends with a statement terminator: the last character outside quotes
/// and comments is `;` (trailing whitespace and `--` comments are allowed after it).
pub fn is_complete(input: &str) -> bool {
    let mut state = Scan::Code;
    let mut terminated = false;
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            Scan::Code => match c {
                '\'' | '"' | '`' => {
                    state = Scan::Quoted(c);
                    terminated = false;
                }
                '-' if chars.peek() == Some(&'-') => {
                    chars.next();
                    state = Scan::LineComment;
                }
                '/' if chars.peek() == Some(&'*') => {
                    chars.next();
                    state = Scan::BlockComment;
                }
                ';' => terminated = true,
                c if c.is_whitespace() => {}
                _ => terminated = false,
            },
            Scan::Quoted(quote) => {
                if c == quote {
                    state = Scan::Code;
                }
            }
            Scan::LineComment => {
                if c == '\n' {
                    state = Scan::Code;
                }
            }
            Scan::BlockComment => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    state = Scan::Code;
                }
            }
        }
    }
    terminated && matches!(state, Scan::Code | Scan::LineComment)
}

/// True for the shell's exit commands: `\q`, `quit`, `exit` (optionally followed by `;`).
pub fn is_exit_command(line: &str) -> bool {
    let word = line.trim().trim_end_matches(';').trim();
    word == "\\q" || word.eq_ignore_ascii_case("quit") || word.eq_ignore_ascii_case("exit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_terminated_statements() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1;  \n"));
        assert!(is_complete("select 1; -- done"));
        assert!(is_complete("select\n  1\n;"));
        assert!(is_complete("select 'a;b';"));
        assert!(is_complete("select 1; select 2;"));
    }

    #[test]
    fn waits_for_more_input() {
        assert!(!is_complete(""));
        assert!(!is_complete("select 1"));
        assert!(!is_complete("select 'a;"));
        assert!(!is_complete("select 1 -- not yet;"));
        assert!(!is_complete("select 1 /* ; */"));
        assert!(!is_complete("select 1; /* open"));
        assert!(!is_complete("select 1; select 2"));
        assert!(!is_complete("select \"a;\" from t"));
    }

    #[test]
    fn recognises_exit_commands() {
        for cmd in ["\\q", "quit", "EXIT", " exit; ", "quit;"] {
            assert!(is_exit_command(cmd), "{cmd}");
        }
        for cmd in ["select 1", "quitting", "\\x"] {
            assert!(!is_exit_command(cmd), "{cmd}");
        }
    }
}
