//! `CALL <procedure>(args)` and the compaction commands Spark Hudi's grammar has, which are
//! calls of the same procedures: `(RUN | SCHEDULE) COMPACTION ON <table | 'path'> [AT
//! <instant>]` runs `run_compaction`, `SHOW COMPACTION ON <table | 'path'> [LIMIT n]` runs
//! `show_compaction`.

use sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned, Statement, Value,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::{name_of, parse_error_at, perr};
use crate::error::HoodieError;

type Result<T> = std::result::Result<T, HoodieError>;

/// A procedure call: its name and its arguments, named (`table => 't'`) or by position.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureCall {
    /// The procedure, lower case.
    pub name: String,
    /// The arguments in order: (name if given, value as text).
    pub args: Vec<(Option<String>, String)>,
}

/// Parses `CALL name(args)`.
pub fn parse_call(sql: &str) -> Result<ProcedureCall> {
    let stmt = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .map_err(perr)?
        .parse_statement()
        .map_err(perr)?;
    let Statement::Call(f) = stmt else {
        return Err(HoodieError::Parse {
            message: format!("expected CALL <procedure>(...), got {stmt}"),
        });
    };
    let mut args = Vec::new();
    if let FunctionArguments::List(list) = &f.args {
        for a in &list.args {
            let (name, expr) = match a {
                FunctionArg::Named { name, arg, .. } => {
                    (Some(name.value.to_ascii_lowercase()), arg)
                }
                FunctionArg::ExprNamed { name, arg, .. } => {
                    (Some(name.to_string().to_ascii_lowercase()), arg)
                }
                FunctionArg::Unnamed(arg) => (None, arg),
            };
            let FunctionArgExpr::Expr(e) = expr else {
                return Err(HoodieError::Parse {
                    message: format!("procedure arguments are literals, got {expr}"),
                });
            };
            args.push((name, literal(e)?));
        }
    }
    Ok(ProcedureCall {
        name: name_of(&f.name),
        args,
    })
}

fn literal(e: &SqlExpr) -> Result<String> {
    match e {
        SqlExpr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(s.clone()),
            Value::Number(n, _) => Ok(n.clone()),
            Value::Boolean(b) => Ok(b.to_string()),
            Value::Null => Ok(String::new()),
            other => Err(parse_error_at(
                format!("unsupported procedure argument {other}"),
                v.span,
            )),
        },
        SqlExpr::Identifier(i) => Ok(i.value.clone()),
        SqlExpr::CompoundIdentifier(parts) => Ok(parts
            .iter()
            .map(|p| p.value.clone())
            .collect::<Vec<_>>()
            .join(".")),
        SqlExpr::UnaryOp { op, expr } if op.to_string() == "-" => {
            Ok(format!("-{}", literal(expr)?))
        }
        other => Err(parse_error_at(
            format!("procedure arguments are literals, got {other}"),
            other.span(),
        )),
    }
}

/// Parses `(RUN | SCHEDULE) COMPACTION ON ...` and `SHOW COMPACTION ON ...` into the calls
/// they stand for; `None` if `sql` is neither.
pub fn parse_compaction_command(sql: &str) -> Result<Option<ProcedureCall>> {
    let toks: Vec<Token> = super::words(sql)?
        .into_iter()
        .filter(|t| !matches!(t, Token::EOF | Token::SemiColon))
        .collect();
    let w = |i: usize, s: &str| super::is_word(toks.get(i), s);
    let op = if w(0, "RUN") {
        "run"
    } else if w(0, "SCHEDULE") {
        "schedule"
    } else if w(0, "SHOW") {
        "show"
    } else {
        return Ok(None);
    };
    if !(w(1, "COMPACTION") && w(2, "ON")) {
        return Ok(None);
    }
    let bad = || HoodieError::Parse {
        message: format!(
            "expected {} COMPACTION ON <table | 'path'> [{}]: {sql}",
            op.to_uppercase(),
            if op == "show" {
                "LIMIT n"
            } else {
                "AT instant"
            }
        ),
    };
    // the table (dotted name) or a quoted path
    let mut i = 3;
    let target = match toks.get(i) {
        Some(Token::SingleQuotedString(p)) => {
            i += 1;
            ("path", p.clone())
        }
        Some(Token::Word(_)) => {
            let mut parts = Vec::new();
            while let Some(Token::Word(x)) = toks.get(i) {
                parts.push(if x.quote_style.is_some() {
                    x.value.clone()
                } else {
                    x.value.to_ascii_lowercase()
                });
                i += 1;
                if toks.get(i) == Some(&Token::Period) {
                    i += 1;
                } else {
                    break;
                }
            }
            ("table", parts.join("."))
        }
        _ => return Err(bad()),
    };
    let mut args = vec![(Some(target.0.to_string()), target.1)];
    let number = |t: Option<&Token>| match t {
        Some(Token::Number(n, _)) => Some(n.clone()),
        Some(Token::SingleQuotedString(s)) => Some(s.clone()),
        _ => None,
    };
    match (op, toks.get(i)) {
        (_, None) => {}
        ("show", Some(_)) if w(i, "LIMIT") => args.push((
            Some("limit".into()),
            number(toks.get(i + 1)).ok_or_else(bad)?,
        )),
        (_, Some(_)) if op != "show" && w(i, "AT") => args.push((
            Some("timestamp".into()),
            number(toks.get(i + 1)).ok_or_else(bad)?,
        )),
        _ => return Err(bad()),
    }
    if toks.len() > i + 2 {
        return Err(bad());
    }
    Ok(Some(match op {
        "show" => ProcedureCall {
            name: "show_compaction".into(),
            args,
        },
        _ => {
            args.insert(0, (Some("op".into()), op.to_string()));
            ProcedureCall {
                name: "run_compaction".into(),
                args,
            }
        }
    }))
}
