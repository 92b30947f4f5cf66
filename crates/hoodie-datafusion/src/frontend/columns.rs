//! The column list of `CREATE TABLE ... USING`, in Spark's grammar: `name type [NOT NULL]
//! [COMMENT '...']`, with nested types written `STRUCT<a: INT, b: STRING>`, `ARRAY<INT>` and
//! `MAP<STRING, INT>` (sqlparser's own column parser knows other spellings of these).

use datafusion::arrow::datatypes::Field;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::{is_word, types};
use crate::error::{HoodieError, Result};

/// Parses `( column, ... )` at the parser's position (the opening parenthesis).
pub fn parse_column_list(p: &mut Parser) -> Result<Vec<Field>> {
    let open = p.next_token().token;
    if open != Token::LParen {
        return Err(parse_error(format!(
            "expected ( before the columns, found {open}"
        )));
    }
    let mut columns = Vec::new();
    let mut column: Vec<Token> = Vec::new();
    let mut depth = 0usize;
    loop {
        let t = p.next_token().token;
        match &t {
            Token::EOF => return Err(parse_error("the column list is not closed".into())),
            Token::RParen if depth == 0 => {
                columns.push(column_of(&column)?);
                return Ok(columns);
            }
            Token::Comma if depth == 0 => {
                columns.push(column_of(&column)?);
                column.clear();
                continue;
            }
            Token::LParen | Token::Lt => depth += 1,
            Token::RParen | Token::Gt => depth = depth.saturating_sub(1),
            // `>>` closes two nested types
            Token::ShiftRight => depth = depth.saturating_sub(2),
            _ => {}
        }
        column.push(t);
    }
}

fn parse_error(message: String) -> HoodieError {
    HoodieError::Parse { message }
}

/// One column: its name, its type up to `NOT NULL` / `NULL` / `COMMENT`, and those options.
fn column_of(tokens: &[Token]) -> Result<Field> {
    let Some((name, rest)) = tokens.split_first() else {
        return Err(parse_error("expected a column definition".into()));
    };
    let name = match name {
        Token::Word(w) => w.value.clone(),
        Token::DoubleQuotedString(s) | Token::SingleQuotedString(s) => s.clone(),
        other => {
            return Err(parse_error(format!(
                "expected a column name, found {other}"
            )))
        }
    };
    if rest
        .iter()
        .any(|t| is_word(Some(t), "FIRST") || is_word(Some(t), "AFTER"))
    {
        return Err(parse_error(format!(
            "column {name}: positions (FIRST, AFTER) are not supported; an added column goes after the table's data columns"
        )));
    }
    let end = rest
        .iter()
        .position(|t| {
            is_word(Some(t), "NOT") || is_word(Some(t), "NULL") || is_word(Some(t), "COMMENT")
        })
        .unwrap_or(rest.len());
    let (type_tokens, options) = rest.split_at(end);
    if type_tokens.is_empty() {
        return Err(parse_error(format!("column {name} has no type")));
    }
    let not_null = options
        .windows(2)
        .any(|w| is_word(Some(&w[0]), "NOT") && is_word(Some(&w[1]), "NULL"));
    let data_type = types::arrow_type(&type_text(type_tokens))?;
    Ok(Field::new(name, data_type, !not_null))
}

/// The type as text: words apart (`double precision`), punctuation close (`struct<a:int>`).
fn type_text(tokens: &[Token]) -> String {
    let mut out = String::new();
    let mut last_word = false;
    for t in tokens {
        let word = matches!(t, Token::Word(_) | Token::Number(..));
        if word && last_word {
            out.push(' ');
        }
        match t {
            Token::Word(w) => out.push_str(&w.value),
            other => out.push_str(&other.to_string()),
        }
        last_word = word;
    }
    out
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::{DataType, Fields};
    use sqlparser::dialect::GenericDialect;

    use super::*;

    fn columns(sql: &str) -> Vec<Field> {
        let mut p = Parser::new(&GenericDialect {}).try_with_sql(sql).unwrap();
        parse_column_list(&mut p).unwrap()
    }

    #[test]
    fn parses_spark_nested_types() {
        let cols = columns(
            "(id INT NOT NULL, nested STRUCT<a1: STRING, a2: INT> COMMENT 'n', \
             arr ARRAY<STRUCT<x: DOUBLE>>, mp MAP<STRING, INT>, d decimal(10, 2), f double precision)",
        );
        let names: Vec<&str> = cols.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["id", "nested", "arr", "mp", "d", "f"]);
        assert!(!cols[0].is_nullable() && cols[1].is_nullable());
        assert_eq!(
            cols[1].data_type(),
            &DataType::Struct(Fields::from(vec![
                Field::new("a1", DataType::Utf8, true),
                Field::new("a2", DataType::Int32, true),
            ]))
        );
        let DataType::List(item) = cols[2].data_type() else {
            panic!("{:?}", cols[2])
        };
        assert!(matches!(item.data_type(), DataType::Struct(f) if f.len() == 1));
        assert!(matches!(cols[3].data_type(), DataType::Map(..)));
        assert_eq!(cols[4].data_type(), &DataType::Decimal128(10, 2));
        assert_eq!(cols[5].data_type(), &DataType::Float64);
    }
}
