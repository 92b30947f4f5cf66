//! Bare names of warehouse tables in a session whose default schema is another: Spark finds a
//! managed table by its bare name in its current database, so a bare name the default schema
//! lacks and the warehouse has is written as the warehouse's `catalog.schema.name` before
//! DataFusion plans the statement. In the shell's session, whose default is the warehouse, a
//! bare name the warehouse lacks finds DataFusion's in-memory tables of `datafusion.public`
//! the same way. Names a `WITH` clause defines are left alone.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::catalog::SchemaProvider;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use sqlparser::ast::{Ident, ObjectName, Query, Statement, Visit, VisitMut, Visitor, VisitorMut};

use super::ddl::{warehouse, warehouse_is_default, warehouse_names};
use crate::frontend;
use crate::names::relations_of;

/// The schema a bare name the default schema lacks is looked up in: the warehouse, when the
/// default is another schema; DataFusion's `datafusion.public`, where the session's in-memory
/// tables live, when the default is the warehouse.
fn fallback_schema(ctx: &SessionContext) -> Option<(String, String, Arc<dyn SchemaProvider>)> {
    if warehouse_is_default(ctx) {
        let schema = ctx.catalog(DATAFUSION_CATALOG)?.schema(PUBLIC_SCHEMA)?;
        return Some((DATAFUSION_CATALOG.into(), PUBLIC_SCHEMA.into(), schema));
    }
    let (catalog, schema) = warehouse_names(ctx)?;
    let wh: Arc<dyn SchemaProvider> = Arc::new(warehouse(ctx).ok()?);
    Some((catalog, schema, wh))
}

/// Where DataFusion keeps its own tables.
const DATAFUSION_CATALOG: &str = "datafusion";
const PUBLIC_SCHEMA: &str = "public";

/// Qualifies the bare table names of `stmt` that the default schema lacks and the fallback
/// schema has (see the module documentation and [`fallback_schema`]).
pub(super) async fn qualify_warehouse_tables(ctx: &SessionContext, stmt: &mut Statement) {
    let Some((catalog, schema, wh)) = fallback_schema(ctx) else {
        return;
    };
    let defined = cte_names(stmt);
    let mut qualify = HashSet::new();
    for relation in relations_of(stmt) {
        if relation.0.len() != 1 {
            continue;
        }
        let name = frontend::name_of(&relation);
        if defined.contains(&name.to_ascii_lowercase()) {
            continue;
        }
        let known = ctx
            .table_provider(frontend::exact_table_ref(&name))
            .await
            .is_ok();
        if !known && wh.table_exist(&name) {
            qualify.insert(name);
        }
    }
    if qualify.is_empty() {
        return;
    }
    struct Qualify<'a> {
        names: &'a HashSet<String>,
        catalog: &'a str,
        schema: &'a str,
    }
    impl VisitorMut for Qualify<'_> {
        type Break = ();
        fn pre_visit_relation(&mut self, relation: &mut ObjectName) -> ControlFlow<()> {
            if relation.0.len() == 1 && self.names.contains(&frontend::name_of(relation)) {
                let table = relation.0[0].as_ident().cloned();
                if let Some(table) = table {
                    *relation = ObjectName::from(vec![
                        Ident::with_quote('"', self.catalog),
                        Ident::with_quote('"', self.schema),
                        table,
                    ]);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = stmt.visit(&mut Qualify {
        names: &qualify,
        catalog: &catalog,
        schema: &schema,
    });
}

/// [`qualify_warehouse_tables`] for a statement of DataFusion's grammar.
pub(super) async fn qualify_df_statement(ctx: &SessionContext, stmt: &mut DFStatement) {
    match stmt {
        DFStatement::Statement(s) => qualify_warehouse_tables(ctx, s).await,
        DFStatement::Explain(e) => Box::pin(qualify_df_statement(ctx, &mut e.statement)).await,
        _ => {}
    }
}

/// The names the `WITH` clauses of `stmt` define, lower-cased.
fn cte_names(stmt: &Statement) -> HashSet<String> {
    struct Ctes(HashSet<String>);
    impl Visitor for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            for cte in query.with.iter().flat_map(|w| &w.cte_tables) {
                self.0.insert(cte.alias.name.value.to_ascii_lowercase());
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = Ctes(HashSet::new());
    let _ = Visit::visit(stmt, &mut v);
    v.0
}
