//! `java.util.Properties` text format: what `hoodie.properties` and
//! `.hoodie_partition_metadata` are written in.

/// An ordered list of properties (Java writes them in hash order; readers do not care, but we
/// keep insertion order so files are stable and the checksum can go last as Java puts it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    entries: Vec<(String, String)>,
}

impl Properties {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` (replacing an earlier value in place).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let value = value.into();
        if let Some(e) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            e.1 = value;
        } else {
            self.entries.push((key, value));
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// All entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Parses the Java Properties text format (ISO-8859-1 text; `\uXXXX` escapes give the rest).
    pub fn parse(bytes: &[u8]) -> Self {
        // ISO-8859-1: every byte is one char.
        let text: String = bytes.iter().map(|&b| b as char).collect();
        let mut props = Properties::new();
        let mut logical = String::new();
        let mut lines = text.split(['\n', '\r']).peekable();
        while let Some(line) = lines.next() {
            let trimmed = line.trim_start_matches([' ', '\t', '\x0c']);
            if logical.is_empty() && (trimmed.is_empty() || trimmed.starts_with(['#', '!'])) {
                continue;
            }
            logical.push_str(trimmed);
            // A line ending in an odd number of backslashes continues on the next line.
            let trailing = logical.chars().rev().take_while(|&c| c == '\\').count();
            if trailing % 2 == 1 && lines.peek().is_some() {
                logical.pop();
                continue;
            }
            let (k, v) = split_key_value(&logical);
            props.set(unescape(&k), unescape(&v));
            logical.clear();
        }
        props
    }

    /// Renders the properties as Java's `Properties.store` does (with a comment line).
    pub fn to_text(&self, comment: Option<&str>) -> String {
        let mut out = String::new();
        if let Some(c) = comment {
            out.push('#');
            out.push_str(c);
            out.push('\n');
        }
        for (k, v) in &self.entries {
            out.push_str(&escape(k, true));
            out.push('=');
            out.push_str(&escape(v, false));
            out.push('\n');
        }
        out
    }
}

fn split_key_value(line: &str) -> (String, String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut key = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            key.push(c);
            key.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\x0c' {
            break;
        }
        key.push(c);
        i += 1;
    }
    // skip whitespace, then at most one separator, then whitespace
    while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\x0c') {
        i += 1;
    }
    if i < chars.len() && matches!(chars[i], '=' | ':') {
        i += 1;
    }
    while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\x0c') {
        i += 1;
    }
    (key, chars[i..].iter().collect())
}

fn unescape(s: &str) -> String {
    // Collect UTF-16 units so surrogate pairs written as two `\u` escapes decode correctly.
    let mut units: Vec<u16> = Vec::with_capacity(s.len());
    let mut chars = s.chars();
    let push = |c: char, units: &mut Vec<u16>| {
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            push(c, &mut units);
            continue;
        }
        match chars.next() {
            Some('t') => push('\t', &mut units),
            Some('n') => push('\n', &mut units),
            Some('r') => push('\r', &mut units),
            Some('f') => push('\x0c', &mut units),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u16::from_str_radix(&hex, 16) {
                    Ok(u) => units.push(u),
                    Err(_) => hex.chars().for_each(|h| push(h, &mut units)),
                }
            }
            Some(other) => push(other, &mut units),
            None => {}
        }
    }
    String::from_utf16_lossy(&units)
}

fn escape(s: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04X}", unit));
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_java_escapes_and_separators() {
        let text = b"#comment\n! other\na=1\nb : two words\nc\\:d=e\\=f\nschema={\"type\"\\:\"record\"}\nlong=x\\\n   y\nu=caf\\u00E9\n";
        let p = Properties::parse(text);
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), Some("two words"));
        assert_eq!(p.get("c:d"), Some("e=f"));
        assert_eq!(p.get("schema"), Some("{\"type\":\"record\"}"));
        assert_eq!(p.get("long"), Some("xy"));
        assert_eq!(p.get("u"), Some("café"));
    }

    #[test]
    fn round_trips_through_text() {
        let mut p = Properties::new();
        p.set("hoodie.table.create.schema", "{\"a\":1, \"b\":\"x=y\"}");
        p.set("weird key", " leading space and é");
        let text = p.to_text(Some("Updated"));
        assert!(text.contains("{\"a\"\\:1, \"b\"\\:\"x\\=y\"}"));
        assert!(text.contains("\\u00E9"));
        assert_eq!(Properties::parse(text.as_bytes()), p);
    }
}
