//! hoodie's table functions: Hudi's `hudi_query('<table or path>', 'snapshot' |
//! 'read_optimized')` and `hudi_table_changes('<table or path>', 'latest_state', '<begin>'
//! [, '<end>'])`, and `hudi_time_travel('<table or path>', '<instant>')`, which `TIMESTAMP AS
//! OF` is rewritten into. Each returns a read-only view of the table running that query.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ScalarValue, TableReference};
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::Expr;
use hoodie_format::history::{incremental_instant, query_instant};

use crate::error::HoodieError;
use crate::provider::{as_hudi, HudiTableProvider};
use crate::scan::cdc::{CdcTableProvider, ImageFormat};
use crate::scan::read_kind::{instant_zone, ReadKind};

/// The names of hoodie's table functions (each reads the table its first argument names).
pub const TABLE_FUNCTIONS: [&str; 3] = [
    "hudi_query",
    "hudi_table_changes",
    crate::frontend::temporal::TIME_TRAVEL_FUNCTION,
];

/// The names and implementations of hoodie's table functions.
pub fn table_functions() -> Vec<(&'static str, Arc<dyn TableFunctionImpl>)> {
    let [query, changes, time_travel] = TABLE_FUNCTIONS;
    vec![
        (query, Arc::new(HudiQueryFunction)),
        (changes, Arc::new(HudiTableChangesFunction)),
        (time_travel, Arc::new(HudiTimeTravelFunction)),
    ]
}

/// The text of a literal argument (a string, or a number as Hudi takes `.toString` of it).
fn text_arg(function: &str, e: &Expr, what: &str) -> DFResult<String> {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Ok(s.clone()),
        Expr::Literal(v, _) if v.data_type().is_integer() && !v.is_null() => Ok(v.to_string()),
        other => Err(DataFusionError::Plan(format!(
            "{function} takes the {what} as a string literal, got {other}"
        ))),
    }
}

/// Calls `f` with the Hudi table a function's first argument names: a path (it contains a
/// `/`, as in Hudi) or a table of the session (a bare name also in the warehouse).
fn with_table<T>(
    function: &str,
    args: &TableFunctionArgs,
    target: &str,
    f: impl FnOnce(&HudiTableProvider) -> DFResult<T>,
) -> DFResult<T> {
    let provider: Option<Arc<dyn TableProvider>> = if target.contains('/') {
        let session = crate::options::session::storage_options(args.session().config_options());
        let opened =
            crate::blocking::block_on(crate::ddl::factory::open_or_create(target, None, &session))?
                .map_err(HoodieError::into_datafusion)?;
        Some(Arc::new(opened.0))
    } else {
        let state = args.session().as_any().downcast_ref::<SessionState>();
        let reference = TableReference::from(target);
        let schemas: Vec<_> = state
            .into_iter()
            .flat_map(|st| {
                let mut v = vec![st.schema_for_ref(reference.clone()).ok()];
                // a bare name of a warehouse table in a session whose default is another schema
                let warehouse = st
                    .config_options()
                    .extensions
                    .get::<crate::options::session::HoodieSessionConfig>()
                    .and_then(|c| c.warehouse());
                if let Some((catalog, schema)) = warehouse {
                    v.push(
                        st.catalog_list()
                            .catalog(catalog)
                            .and_then(|c| c.schema(schema)),
                    );
                }
                v
            })
            .flatten()
            .collect();
        let table = reference.table().to_string();
        crate::blocking::block_on(async move {
            for s in schemas {
                if let Ok(Some(t)) = s.table(&table).await {
                    return Some(t);
                }
            }
            None
        })?
    };
    let provider = provider.ok_or_else(|| {
        HoodieError::TableNotFound {
            name: target.to_string(),
        }
        .into_datafusion()
    })?;
    let hudi = as_hudi(&provider).ok_or_else(|| {
        DataFusionError::Plan(format!("{function} reads Hudi tables; {target} is not one"))
    })?;
    f(hudi)
}

/// The `hudi_query` table function.
#[derive(Debug, Default)]
pub struct HudiQueryFunction;

impl TableFunctionImpl for HudiQueryFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        if exprs.len() != 2 {
            return Err(DataFusionError::Plan(format!(
                "hudi_query takes 2 arguments (table or path, 'snapshot' or 'read_optimized'), got {}",
                exprs.len()
            )));
        }
        let target = text_arg("hudi_query", &exprs[0], "table or path")?;
        let read = match text_arg("hudi_query", &exprs[1], "query type")?
            .to_ascii_lowercase()
            .as_str()
        {
            "snapshot" => ReadKind::Snapshot,
            "read_optimized" => ReadKind::ReadOptimized,
            other => {
                return Err(DataFusionError::Plan(format!(
                    "hudi_query's query type must be 'snapshot' or 'read_optimized', got '{other}'"
                )))
            }
        };
        with_table("hudi_query", &args, &target, |h| {
            Ok(Arc::new(h.read_view(read)) as Arc<dyn TableProvider>)
        })
    }
}

/// The `hudi_table_changes` table function (Hudi's incremental query as a table).
#[derive(Debug, Default)]
pub struct HudiTableChangesFunction;

impl TableFunctionImpl for HudiTableChangesFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        const NAME: &str = "hudi_table_changes";
        let exprs = args.exprs();
        if !(3..=4).contains(&exprs.len()) {
            return Err(DataFusionError::Plan(format!("Expect arguments (table_name or table_path, incremental_format, start_instant, [end_instant]) for function `{NAME}`")));
        }
        let target = text_arg(NAME, &exprs[0], "table or path")?;
        let format = text_arg(NAME, &exprs[1], "incremental format")?;
        let begin = text_arg(NAME, &exprs[2], "start instant")?;
        let end = exprs
            .get(3)
            .map(|e| text_arg(NAME, e, "end instant"))
            .transpose()?;
        let cdc = match format.as_str() {
            "latest_state" => false,
            "cdc" => true,
            other => {
                return Err(DataFusionError::Plan(format!(
                    "'{NAME}' doesn't support `{other}` (use 'latest_state' or 'cdc')"
                )))
            }
        };
        let images = crate::options::write::SessionOptions::of_session(args.session())
            .get(hoodie_format::config::CDC_IMAGE_FORMAT.key)
            .map(str::to_string);
        with_table(NAME, &args, &target, |h| {
            let zone = instant_zone(h.table().config());
            let normal = |t: &str| incremental_instant(t, zone).map_err(crate::error::df_err);
            let (begin, end) = (normal(&begin)?, end.as_deref().map(normal).transpose()?);
            if cdc {
                let images =
                    ImageFormat::parse(images.as_deref()).map_err(HoodieError::into_datafusion)?;
                let provider =
                    CdcTableProvider::try_new(h.table().clone(), h.schema(), begin, end, images)
                        .map_err(HoodieError::into_datafusion)?;
                return Ok(Arc::new(provider) as Arc<dyn TableProvider>);
            }
            let read = ReadKind::Incremental { begin, end };
            Ok(Arc::new(h.read_view(read)) as Arc<dyn TableProvider>)
        })
    }
}

/// The `hudi_time_travel` table function: the table as of an instant.
#[derive(Debug, Default)]
pub struct HudiTimeTravelFunction;

impl TableFunctionImpl for HudiTimeTravelFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        const NAME: &str = crate::frontend::temporal::TIME_TRAVEL_FUNCTION;
        let exprs = args.exprs();
        if exprs.len() != 2 {
            return Err(DataFusionError::Plan(format!(
                "{NAME} takes 2 arguments (table or path, instant), got {}",
                exprs.len()
            )));
        }
        let target = text_arg(NAME, &exprs[0], "table or path")?;
        let instant = text_arg(NAME, &exprs[1], "instant")?;
        with_table(NAME, &args, &target, |h| {
            let zone = instant_zone(h.table().config());
            let at = query_instant(&instant, zone).map_err(crate::error::df_err)?;
            Ok(Arc::new(h.read_view(ReadKind::AsOf(at))) as Arc<dyn TableProvider>)
        })
    }
}
