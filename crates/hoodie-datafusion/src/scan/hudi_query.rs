//! `hudi_query('<table or path>', 'snapshot' | 'read_optimized')`: Hudi's table function for
//! the two queries of a table (on a copy-on-write table both read the same).

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ScalarValue, TableReference};
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::Expr;

use crate::error::HoodieError;
use crate::provider::as_hudi;

/// The `hudi_query` table function.
#[derive(Debug, Default)]
pub struct HudiQueryFunction;

fn text_arg(e: &Expr, what: &str) -> DFResult<String> {
    match e {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Ok(s.clone()),
        other => Err(DataFusionError::Plan(format!(
            "hudi_query takes the {what} as a string literal, got {other}"
        ))),
    }
}

/// Runs `f` to completion on a runtime of its own, on a thread of its own: a table function
/// is called while a statement is planned, outside any async context it could await in.
fn block_on<T: Send>(f: impl std::future::Future<Output = T> + Send) -> DFResult<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(f))
        })
        .join()
    })
    .map_err(|_| DataFusionError::Internal("hudi_query's lookup panicked".into()))?
    .map_err(|e| DataFusionError::External(Box::new(e)))
}

impl TableFunctionImpl for HudiQueryFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        if exprs.len() != 2 {
            return Err(DataFusionError::Plan(format!(
                "hudi_query takes 2 arguments (table or path, 'snapshot' or 'read_optimized'), got {}",
                exprs.len()
            )));
        }
        let target = text_arg(&exprs[0], "table or path")?;
        let read_optimized = match text_arg(&exprs[1], "query type")?
            .to_ascii_lowercase()
            .as_str()
        {
            "snapshot" => false,
            "read_optimized" => true,
            other => {
                return Err(DataFusionError::Plan(format!(
                    "hudi_query's query type must be 'snapshot' or 'read_optimized', got '{other}'"
                )))
            }
        };
        let session = args.session();
        let state = session.as_any().downcast_ref::<SessionState>();
        let provider: Option<Arc<dyn TableProvider>> = if target.contains('/') {
            let opened = block_on(crate::ddl::factory::open_or_create(&target, None))?
                .map_err(HoodieError::into_datafusion)?;
            Some(Arc::new(opened.0))
        } else {
            let reference = TableReference::from(target.as_str());
            let schemas: Vec<_> = state
                .into_iter()
                .flat_map(|st| {
                    let mut v = vec![st.schema_for_ref(reference.clone()).ok()];
                    // a bare name of a warehouse table in a session whose default is another schema
                    let warehouse = st
                        .config_options()
                        .extensions
                        .get::<crate::session::config::HoodieSessionConfig>()
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
            block_on(async move {
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
                name: target.clone(),
            }
            .into_datafusion()
        })?;
        let hudi = as_hudi(&provider).ok_or_else(|| {
            DataFusionError::Plan(format!("hudi_query reads Hudi tables; {target} is not one"))
        })?;
        Ok(Arc::new(hudi.view(read_optimized)))
    }
}
