//! Hudi's Spark SQL dialect on any DataFusion session: [`HudiSqlExt::hudi_sql`] runs one
//! statement of everything hoodie accepts (`CREATE TABLE ... USING hudi`, CTAS, MERGE with
//! `UPDATE SET *` / `INSERT *`, `INSERT ... PARTITION`, `SHOW PARTITIONS`, `SET`/`RESET` of
//! `hoodie.*` keys, ...) on the context it is called on; the rest goes to DataFusion, with
//! names resolved as Spark resolves them.

mod alter_columns;
mod ddl;
pub mod depth;
mod describe;
mod options;
mod partitions;
mod procedures;
mod qualify;
mod upgrade;
mod write;

use async_trait::async_trait;
use datafusion::dataframe::DataFrame;
use datafusion::error::Result as DFResult;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use sqlparser::ast::Statement;

use crate::error::{HoodieError, Result};
use crate::frontend::{self, FrontStatement, ParseOptions, Parsed};
use crate::names::{resolve_df_names, resolve_names};
use crate::options::session::case_sensitive;

/// Hudi's Spark SQL dialect on a DataFusion [`SessionContext`] built with
/// [`with_hoodie`](crate::SessionStateBuilderExt::with_hoodie).
#[async_trait]
pub trait HudiSqlExt {
    /// Plans one statement of Hudi's Spark SQL dialect (or DataFusion's) on this context.
    ///
    /// Like [`SessionContext::sql`], DDL and `SET` run at once and return an empty frame;
    /// queries and DML return a frame that runs when it is collected (a DML's one row is its
    /// `count`).
    ///
    /// ```
    /// use datafusion::execution::session_state::SessionStateBuilder;
    /// use datafusion::prelude::SessionContext;
    /// use hoodie_datafusion::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> datafusion::error::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let state = SessionStateBuilder::new()
    ///     .with_default_features()
    ///     .with_hoodie(HoodieOptions::new(dir.path().to_string_lossy()))
    ///     .build();
    /// let ctx = SessionContext::new_with_state(state);
    /// ctx.hudi_sql("CREATE TABLE t (id INT, userName STRING, ts INT) USING hudi \
    ///               TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')").await?;
    /// ctx.hudi_sql("INSERT INTO t VALUES (1, 'a', 1)").await?.collect().await?;
    /// // MERGE with Spark's stars, names in any case
    /// ctx.hudi_sql("MERGE INTO t USING (SELECT 1 AS id, 'b' AS username, 2 AS ts) s \
    ///               ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    ///     .await?
    ///     .collect()
    ///     .await?;
    /// let rows = ctx.hudi_sql("SELECT USERNAME FROM t").await?.collect().await?;
    /// let name = datafusion::arrow::util::display::array_value_to_string(rows[0].column(0), 0)?;
    /// assert_eq!(name, "b");
    /// # Ok(())
    /// # }
    /// ```
    async fn hudi_sql(&self, sql: &str) -> DFResult<DataFrame>;
}

#[async_trait]
impl HudiSqlExt for SessionContext {
    async fn hudi_sql(&self, sql: &str) -> DFResult<DataFrame> {
        run(self, sql).await.map_err(HoodieError::into_datafusion)
    }
}

/// [`HudiSqlExt::hudi_sql`] with hoodie's own error type.
pub async fn run(ctx: &SessionContext, sql: &str) -> Result<DataFrame> {
    // before anything parses it: a statement too deep to plan is an error, not an abort
    depth::check(sql)?;
    let (exact, options) = {
        let state = ctx.state_ref();
        let state = state.read();
        let config = state.config_options();
        (case_sensitive(config), ParseOptions::of(config))
    };
    let Parsed { statement, source } = frontend::parse(sql, &options)?;
    match statement {
        FrontStatement::PassThrough(stmt) => {
            upgrade::before_datafusion_write(ctx, &stmt).await?;
            let show_tables = is_show_tables(&stmt);
            let df = run_datafusion(ctx, *stmt).await?;
            if show_tables {
                ddl::warn_unopenable_tables(ctx).await;
            }
            Ok(df)
        }
        FrontStatement::Call(call) => procedures::call(ctx, call).await,
        FrontStatement::CreateUsing(c) => ddl::create_using(ctx, c).await,
        // a table of the warehouse outlives the session: without USING it is a Hudi table
        // (never an in-memory table that is gone at exit); elsewhere DataFusion's own
        FrontStatement::CreateDefault(c) => {
            if ddl::lands_in_warehouse(ctx, &c.name) {
                ddl::create_using(ctx, c).await
            } else {
                run_datafusion(ctx, source.datafusion()?).await
            }
        }
        FrontStatement::DropTable {
            name,
            if_exists,
            purge,
        } => match ddl::drop_table(ctx, &name, if_exists, purge).await? {
            Some(df) => Ok(df),
            None => run_datafusion(ctx, source.datafusion()?).await,
        },
        FrontStatement::Set { key, value } => options::set(ctx, &key, &value),
        FrontStatement::Reset { key } => options::reset(ctx, key.as_deref()),
        FrontStatement::ShowPartitions { name } => ddl::show_partitions(ctx, &name).await,
        FrontStatement::RenameTable { name, new_name } => {
            ddl::rename_table(ctx, &name, &new_name).await
        }
        FrontStatement::TableInfo { name, info } => {
            if ddl::is_hudi_table(ctx, &name).await {
                describe::table_info(ctx, &name, info).await
            } else {
                run_datafusion(ctx, source.datafusion()?).await
            }
        }
        FrontStatement::Truncate { name, partition } => {
            if ddl::is_hudi_table(ctx, &name).await {
                partitions::truncate(ctx, &name, partition).await
            } else {
                run_datafusion(ctx, source.datafusion()?).await
            }
        }
        FrontStatement::DropPartitions {
            name,
            if_exists,
            specs,
            purge,
        } => partitions::drop_partitions(ctx, &name, if_exists, specs, purge).await,
        FrontStatement::AddColumns { name, columns } => {
            alter_columns::add_columns(ctx, &name, columns).await
        }
        FrontStatement::AlterSetProperties { name, properties } => {
            ddl::alter_properties(ctx, &name, properties).await
        }
        FrontStatement::Merge(mut stmt) => {
            qualify::qualify_warehouse_tables(ctx, &mut stmt).await;
            upgrade::before_write(ctx, &stmt).await?;
            write::merge(ctx, *stmt, exact).await
        }
        FrontStatement::Update(mut stmt) => {
            qualify::qualify_warehouse_tables(ctx, &mut stmt).await;
            upgrade::before_write(ctx, &stmt).await?;
            resolve_names(&mut stmt, ctx, exact).await?;
            plan_statement(ctx, *stmt).await
        }
        FrontStatement::Insert(mut stmt) => {
            qualify::qualify_warehouse_tables(ctx, &mut stmt).await;
            upgrade::before_write(ctx, &stmt).await?;
            write::insert(ctx, *stmt, exact).await
        }
    }
}

/// `SHOW TABLES ...`: the listing whose tables that cannot be opened are named in warnings.
fn is_show_tables(stmt: &DFStatement) -> bool {
    matches!(stmt, DFStatement::Statement(s) if matches!(**s, Statement::ShowTables { .. }))
}

/// Plans a parsed statement with DataFusion.
async fn plan_statement(ctx: &SessionContext, stmt: Statement) -> Result<DataFrame> {
    let plan = ctx
        .state()
        .statement_to_plan(DFStatement::Statement(Box::new(stmt)))
        .await?;
    Ok(ctx.execute_logical_plan(plan).await?)
}

/// Runs a statement of DataFusion's grammar, names resolved first.
async fn run_datafusion(ctx: &SessionContext, mut stmt: DFStatement) -> Result<DataFrame> {
    let state = ctx.state();
    qualify::qualify_df_statement(ctx, &mut stmt).await;
    let exact = case_sensitive(state.config_options());
    resolve_df_names(&mut stmt, ctx, exact).await?;
    let plan = state.statement_to_plan(stmt).await?;
    Ok(ctx.execute_logical_plan(plan).await?)
}
