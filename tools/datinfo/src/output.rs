//! Output: aligned text tables, `name: value` blocks, and JSON (written by hand: the project
//! takes no serde dependency).

use std::fmt;

/// A JSON value.
pub enum Json {
    Null,
    Bool(bool),
    Num(u64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// A string, or null for None.
    pub fn opt(s: Option<impl Into<String>>) -> Json {
        s.map_or(Json::Null, Json::str)
    }

    /// A string or number as plain text (no quotes); other values as JSON.
    pub fn plain(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            other => other.to_string(),
        }
    }

    pub fn strs<S: AsRef<str>>(v: &[S]) -> Json {
        Json::Arr(v.iter().map(|s| Json::str(s.as_ref())).collect())
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Num(n) => write!(f, "{n}"),
            Json::Str(s) => write_str(f, s),
            Json::Arr(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            Json::Obj(v) => {
                f.write_str("{")?;
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_str(f, k)?;
                    write!(f, ":{x}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Rows of cells printed in aligned columns (two spaces apart; the last column unpadded).
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table { rows: vec![header.iter().map(|s| s.to_string()).collect()] }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect();
        for row in &self.rows {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
                }
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// `name: value` lines with the values aligned.
pub fn fields(pairs: &[(&str, String)]) -> String {
    let width = pairs.iter().map(|(k, _)| k.len() + 1).max().unwrap_or(0);
    pairs.iter().map(|(k, v)| format!("{:<width$} {v}\n", format!("{k}:"))).collect()
}

/// A cell for an optional value: the value or `-`.
pub fn cell(v: Option<&str>) -> String {
    v.unwrap_or("-").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes() {
        let j = Json::Obj(vec![
            ("a", Json::str("q\"b\\n\n\u{1}é")),
            ("b", Json::Arr(vec![Json::Null, Json::Bool(true), Json::Num(7)])),
        ]);
        assert_eq!(j.to_string(), r#"{"a":"q\"b\\n\n\u0001é","b":[null,true,7]}"#);
    }

    #[test]
    fn table_aligns() {
        let mut t = Table::new(&["A", "BB", "C"]);
        t.push(vec!["xxx".into(), "y".into(), "last cell".into()]);
        assert_eq!(t.to_string(), "A    BB  C\nxxx  y   last cell\n");
    }
}
