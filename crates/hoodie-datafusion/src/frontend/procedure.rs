//! `CALL <procedure>(args)` and the compaction commands Spark Hudi's grammar has, which are
//! calls of the same procedures: `(RUN | SCHEDULE) COMPACTION ON <table | 'path'> [AT
//! <instant>]` runs `run_compaction`, `SHOW COMPACTION ON <table | 'path'> [LIMIT n]` runs
//! `show_compaction`.

use sqlparser::ast::{
    Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned, Statement, Value,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::{expect_end, name_of, parse_error_at, perr};
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
pub(super) fn parse_call(p: &mut Parser) -> Result<ProcedureCall> {
    let stmt = p.parse_statement().map_err(perr)?;
    expect_end(p)?;
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

/// Parses `(RUN | SCHEDULE) COMPACTION ON <table | 'path'> [AT instant]` and `SHOW COMPACTION
/// ON <table | 'path'> [LIMIT n]` into the calls they stand for.
pub(super) fn parse_compaction_command(p: &mut Parser) -> Result<ProcedureCall> {
    let op = match p.next_token().token {
        Token::Word(w) if w.keyword == Keyword::SHOW => "show",
        Token::Word(w) if w.value.eq_ignore_ascii_case("SCHEDULE") => "schedule",
        _ => "run",
    };
    let expected = || {
        format!(
            "expected {} COMPACTION ON <table | 'path'> [{}]",
            op.to_uppercase(),
            if op == "show" {
                "LIMIT n"
            } else {
                "AT instant"
            }
        )
    };
    let bad =
        |t: TokenWithSpan| parse_error_at(format!("{}, found {}", expected(), t.token), t.span);
    p.next_token(); // COMPACTION
    if !p.parse_keyword(Keyword::ON) {
        return Err(bad(p.peek_token()));
    }
    // the table (dotted name) or a quoted path
    let target = match p.peek_token().token {
        Token::SingleQuotedString(path) => {
            p.next_token();
            ("path", path)
        }
        Token::Word(_) => ("table", name_of(&p.parse_object_name(false).map_err(perr)?)),
        _ => return Err(bad(p.peek_token())),
    };
    let mut args = vec![(Some(target.0.to_string()), target.1)];
    let (keyword, arg) = match op {
        "show" => (Keyword::LIMIT, "limit"),
        _ => (Keyword::AT, "timestamp"),
    };
    if p.parse_keyword(keyword) {
        let t = p.next_token();
        let value = match &t.token {
            Token::Number(n, _) => n.clone(),
            Token::SingleQuotedString(s) => s.clone(),
            _ => return Err(bad(t)),
        };
        args.push((Some(arg.into()), value));
    }
    let _ = p.consume_token(&Token::SemiColon);
    if p.peek_token().token != Token::EOF {
        return Err(bad(p.peek_token()));
    }
    Ok(match op {
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
    })
}
