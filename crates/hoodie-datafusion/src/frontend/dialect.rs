//! hoodie's sqlparser dialect: the session's dialect (`datafusion.sql_parser.dialect`) as it
//! is, with Spark's temporal clause (`t TIMESTAMP AS OF ...`, `FOR SYSTEM_TIME AS OF`) parsed
//! into the table factor's version, so a time-travel read is one more node of the AST rather than
//! a text rewrite.
//!
//! sqlparser's `derive_dialect!` reads sqlparser's own source tree and so works only inside
//! sqlparser; the session's dialect is also chosen at run time. The wrapper therefore forwards
//! every method of [`Dialect`] to the dialect it wraps (and answers the parser's type checks as
//! that dialect), overriding only `supports_table_versioning`.

use std::any::TypeId;
use std::iter::Peekable;
use std::str::Chars;

use sqlparser::ast::{ColumnOption, Expr, GranteesType, Ident, ObjectNamePart, Statement};
use sqlparser::dialect::{dialect_from_str, Dialect, GenericDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};

use crate::error::{HoodieError, Result};

/// The session's dialect with Spark's time-travel clause.
#[derive(Debug)]
pub struct HoodieDialect {
    inner: Box<dyn Dialect>,
}

impl HoodieDialect {
    /// The dialect named as `datafusion.sql_parser.dialect` names it (`generic`, `postgresql`,
    /// ...), with hoodie's additions.
    pub fn named(name: &str) -> Result<Self> {
        let inner = dialect_from_str(name).ok_or_else(|| HoodieError::Parse {
            message: format!("Unsupported SQL dialect: {name}"),
        })?;
        Ok(Self { inner })
    }
}

impl Default for HoodieDialect {
    fn default() -> Self {
        Self {
            inner: Box::new(GenericDialect {}),
        }
    }
}

/// Forwards each `fn name(&self) -> bool` to the wrapped dialect.
macro_rules! forward_bools {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { self.inner.$name() })*
    };
}

impl Dialect for HoodieDialect {
    fn dialect(&self) -> TypeId {
        self.inner.dialect()
    }

    /// `t TIMESTAMP AS OF x`, `t FOR SYSTEM_TIME AS OF x`, `t VERSION AS OF n`: the clause
    /// becomes the table factor's version (see the module comment).
    fn supports_table_versioning(&self) -> bool {
        true
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.inner.is_delimited_identifier_start(ch)
    }

    fn is_nested_delimited_identifier_start(&self, ch: char) -> bool {
        self.inner.is_nested_delimited_identifier_start(ch)
    }

    fn peek_nested_delimited_identifier_quotes(
        &self,
        chars: Peekable<Chars<'_>>,
    ) -> Option<(char, Option<char>)> {
        self.inner.peek_nested_delimited_identifier_quotes(chars)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.inner.identifier_quote_style(identifier)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.inner.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.inner.is_identifier_part(ch)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.inner.is_custom_operator_part(ch)
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<std::result::Result<Expr, ParserError>> {
        self.inner.parse_prefix(parser)
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<std::result::Result<Expr, ParserError>> {
        self.inner.parse_infix(parser, expr, precedence)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<std::result::Result<u8, ParserError>> {
        self.inner.get_next_precedence(parser)
    }

    fn get_next_precedence_default(&self, parser: &Parser) -> std::result::Result<u8, ParserError> {
        self.inner.get_next_precedence_default(parser)
    }

    fn parse_statement(
        &self,
        parser: &mut Parser,
    ) -> Option<std::result::Result<Statement, ParserError>> {
        self.inner.parse_statement(parser)
    }

    #[allow(clippy::type_complexity)]
    fn parse_column_option(
        &self,
        parser: &mut Parser,
    ) -> std::result::Result<
        Option<std::result::Result<Option<ColumnOption>, ParserError>>,
        ParserError,
    > {
        self.inner.parse_column_option(parser)
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        self.inner.prec_value(prec)
    }

    fn prec_unknown(&self) -> u8 {
        self.inner.prec_unknown()
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        self.inner.is_reserved_for_identifier(kw)
    }

    fn get_reserved_keywords_for_select_item_operator(&self) -> &[Keyword] {
        self.inner.get_reserved_keywords_for_select_item_operator()
    }

    fn get_reserved_grantees_types(&self) -> &[GranteesType] {
        self.inner.get_reserved_grantees_types()
    }

    fn is_column_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        self.inner.is_column_alias(kw, parser)
    }

    fn is_select_item_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.inner.is_select_item_alias(explicit, kw, parser)
    }

    fn is_table_factor(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        self.inner.is_table_factor(kw, parser)
    }

    fn is_table_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        self.inner.is_table_alias(kw, parser)
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.inner.is_table_factor_alias(explicit, kw, parser)
    }

    fn is_identifier_generating_function_name(
        &self,
        ident: &Ident,
        name_parts: &[ObjectNamePart],
    ) -> bool {
        self.inner
            .is_identifier_generating_function_name(ident, name_parts)
    }

    forward_bools!(
        supports_string_literal_backslash_escape,
        ignores_wildcard_escapes,
        supports_unicode_string_literal,
        supports_filter_during_aggregation,
        supports_window_clause_named_window_reference,
        supports_within_after_array_aggregation,
        supports_partition_by_after_order_by,
        supports_array_join_syntax,
        supports_group_by_expr,
        supports_group_by_with_modifier,
        supports_left_associative_joins_without_parens,
        supports_outer_join_operator,
        supports_cross_join_constraint,
        supports_connect_by,
        supports_execute_immediate,
        supports_match_recognize,
        supports_in_empty_list,
        supports_start_transaction_modifier,
        supports_end_transaction_modifier,
        supports_named_fn_args_with_eq_operator,
        supports_named_fn_args_with_colon_operator,
        supports_named_fn_args_with_assignment_operator,
        supports_named_fn_args_with_rarrow_operator,
        supports_named_fn_args_with_expr_name,
        supports_numeric_prefix,
        supports_numeric_literal_underscores,
        supports_window_function_null_treatment_arg,
        supports_dictionary_syntax,
        support_map_literal_syntax,
        supports_lambda_functions,
        supports_parenthesized_set_variables,
        supports_comma_separated_set_assignments,
        supports_update_order_by,
        supports_select_wildcard_except,
        convert_type_before_value,
        supports_triple_quoted_string,
        supports_trailing_commas,
        supports_limit_comma,
        supports_string_literal_concatenation,
        supports_string_literal_concatenation_with_newline,
        supports_projection_trailing_commas,
        supports_from_trailing_commas,
        supports_column_definition_trailing_commas,
        supports_object_name_double_dot_notation,
        supports_struct_literal,
        supports_empty_projections,
        supports_select_expr_star,
        supports_from_first_select,
        supports_from_first_insert,
        supports_pipe_operator,
        supports_user_host_grantee,
        supports_match_against,
        supports_select_wildcard_exclude,
        supports_select_exclude,
        supports_create_table_multi_schema_info_sources,
        supports_select_modifiers,
        describe_requires_table_keyword,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_extract_comma_syntax,
        supports_subquery_as_function_arg,
        supports_create_view_comment_syntax,
        supports_array_typedef_without_element_type,
        supports_parens_around_table_factor,
        supports_values_as_table_factor,
        supports_dollar_placeholder,
        supports_dollar_as_money_prefix,
        supports_create_index_with_clause,
        require_interval_qualifier,
        supports_explain_with_utility_options,
        supports_asc_desc_in_column_definition,
        supports_factorial_operator,
        supports_bitwise_shift_operators,
        supports_nested_comments,
        supports_multiline_comment_hints,
        supports_eq_alias_assignment,
        supports_try_convert,
        supports_bang_not_operator,
        supports_listen_notify,
        supports_load_data,
        supports_load_extension,
        supports_top_before_distinct,
        supports_boolean_literals,
        supports_show_like_before_in,
        supports_comment_on,
        supports_create_table_select,
        supports_partiql,
        supports_constraint_keyword_without_name,
        supports_key_column_option,
        supports_table_sample_before_alias,
        supports_insert_set,
        supports_insert_table_function,
        supports_insert_table_query,
        supports_insert_format,
        supports_insert_table_alias,
        supports_set_stmt_without_operator,
        supports_string_escape_constant,
        supports_table_hints,
        requires_single_line_comment_whitespace,
        supports_array_typedef_with_brackets,
        supports_geometric_types,
        supports_order_by_all,
        supports_set_names,
        supports_space_separated_column_options,
        supports_alter_column_type_using,
        supports_comma_separated_drop_column_list,
        supports_notnull_operator,
        supports_data_type_signed_suffix,
        supports_interval_options,
        supports_create_table_like_parenthesized,
        supports_semantic_view_table_factor,
        supports_quote_delimited_string,
        supports_comment_optimizer_hint,
        supports_double_ampersand_operator,
        supports_binary_kw_as_cast,
        supports_select_wildcard_replace,
        supports_select_wildcard_ilike,
        supports_select_wildcard_rename,
        supports_select_wildcard_with_alias,
        supports_optimize_table,
        supports_install,
        supports_detach,
        supports_prewhere,
        supports_with_fill,
        supports_limit_by,
        supports_interpolate,
        supports_settings,
        supports_select_format,
        supports_comma_separated_trim,
        supports_cte_without_as,
        supports_select_item_multi_column_alias,
        supports_xml_expressions,
        supports_create_table_using,
        supports_long_type_as_bigint,
        supports_map_literal_with_angle_brackets
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};

    #[test]
    fn answers_as_the_dialect_it_wraps_plus_table_versioning() {
        let mysql = HoodieDialect::named("MySQL").unwrap();
        let d: &dyn Dialect = &mysql;
        assert!(d.is::<MySqlDialect>());
        assert!(d.supports_string_literal_backslash_escape());
        assert!(d.is_delimited_identifier_start('`'));
        assert!(d.supports_table_versioning());
        let pg = HoodieDialect::named("postgresql").unwrap();
        let d: &dyn Dialect = &pg;
        assert!(d.is::<PostgreSqlDialect>());
        assert!(!d.supports_string_literal_backslash_escape());
        assert!(
            d.supports_factorial_operator() == PostgreSqlDialect {}.supports_factorial_operator()
        );
        let generic = HoodieDialect::default();
        assert!(!generic.supports_string_literal_backslash_escape());
        let e = HoodieDialect::named("klingon").unwrap_err().to_string();
        assert!(e.contains("Unsupported SQL dialect: klingon"), "{e}");
    }
}
