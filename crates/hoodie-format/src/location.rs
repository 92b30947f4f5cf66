//! Table locations as users write them, to the object store and base path a table lives at: a
//! local path or `file://` URL, `memory://<name>/<path>` (an in-memory store shared by the
//! process), or an object-store URL (`s3://`, `s3a://`, `gs://`, `az://`, `abfs[s]://`)
//! configured from the environment and from options with object_store's key names (the ones
//! hudi-rs takes: `aws_endpoint`, `aws_region`, `aws_access_key_id`, `google_service_account`,
//! `azure_storage_account_name`, ...).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// The in-memory stores of `memory://` locations, one per name, for the life of the process.
fn memory_store(name: &str) -> Arc<InMemory> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<InMemory>>>> = OnceLock::new();
    let mut stores = STORES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    stores
        .entry(name.to_string())
        .or_insert_with(|| Arc::new(InMemory::new()))
        .clone()
}

fn bad(location: &str, reason: impl ToString) -> FormatError {
    FormatError::InvalidProperty {
        key: "location".into(),
        value: location.to_string(),
        reason: reason.to_string(),
    }
}

/// Whether `key` configures an object store (an option of a location's store, never a table
/// property): one of object_store's keys for S3, GCS or Azure.
pub fn is_storage_option(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.parse::<object_store::aws::AmazonS3ConfigKey>().is_ok()
        || k.parse::<object_store::gcp::GoogleConfigKey>().is_ok()
        || k.parse::<object_store::azure::AzureConfigKey>().is_ok()
}

/// Hadoop's S3A keys (as Spark sessions set them, `spark.hadoop.fs.s3a.*` or `fs.s3a.*`) and the
/// object_store keys they stand for.
const S3A_KEYS: &[(&str, &str)] = &[
    ("fs.s3a.endpoint", "aws_endpoint"),
    ("fs.s3a.access.key", "aws_access_key_id"),
    ("fs.s3a.secret.key", "aws_secret_access_key"),
    ("fs.s3a.session.token", "aws_session_token"),
    ("fs.s3a.endpoint.region", "aws_region"),
];

/// The object_store option `key = value` sets, if it configures a store: an object_store key
/// for S3, GCS or Azure (lowercased), or one of Hadoop's S3A keys (`fs.s3a.endpoint`,
/// `access.key`, `secret.key`, `session.token`, `endpoint.region`, `path.style.access`,
/// `connection.ssl.enabled`, also under `spark.hadoop.`).
pub fn storage_option(key: &str, value: &str) -> Option<(String, String)> {
    let k = key.trim().to_ascii_lowercase();
    if is_storage_option(&k) {
        return Some((k, value.to_string()));
    }
    let hadoop = k.strip_prefix("spark.hadoop.").unwrap_or(&k);
    let flag = |v: &str, negate: bool| {
        let on = v.trim().eq_ignore_ascii_case("true");
        (on != negate).to_string()
    };
    match hadoop {
        "fs.s3a.path.style.access" => {
            Some(("aws_virtual_hosted_style_request".into(), flag(value, true)))
        }
        "fs.s3a.connection.ssl.enabled" => Some(("aws_allow_http".into(), flag(value, true))),
        _ => S3A_KEYS
            .iter()
            .find(|(h, _)| *h == hadoop)
            .map(|(_, o)| (o.to_string(), value.to_string())),
    }
}

/// Whether the store of `location` lives in this process only (`memory://`): no other
/// process, a worker of a cluster, can read it.
pub fn is_process_local(location: &str) -> bool {
    scheme(location).is_some_and(|s| s.eq_ignore_ascii_case("memory"))
}

/// The scheme of `location` (`None` for a plain path).
pub fn scheme(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    (!scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+'))
    .then_some(scheme)
}

/// The storage of the table at `location`, the object store configured with `options`
/// (object_store's keys; others are left to the caller) over the environment's settings.
pub fn open_location(location: &str, options: &[(String, String)]) -> Result<TableStorage> {
    let Some(scheme) = scheme(location) else {
        return TableStorage::local(std::path::Path::new(location));
    };
    let url = url::Url::parse(location).map_err(|e| bad(location, e))?;
    let base = Path::from(url.path().trim_start_matches('/'));
    let store: Arc<dyn ObjectStore> = match scheme.to_ascii_lowercase().as_str() {
        "file" => {
            let path = url
                .to_file_path()
                .map_err(|_| bad(location, "not a local file URL"))?;
            return TableStorage::local(&path);
        }
        "memory" => memory_store(url.host_str().unwrap_or_default()),
        "s3" | "s3a" => Arc::new(s3(&url, options).map_err(|e| bad(location, e))?),
        "gs" => Arc::new(gcs(&url, options).map_err(|e| bad(location, e))?),
        "az" | "azure" | "abfs" | "abfss" | "adl" => {
            Arc::new(azure(&url, options).map_err(|e| bad(location, e))?)
        }
        other => {
            return Err(FormatError::Unsupported {
                feature: format!(
                    "table location {location}: scheme {other}:// (hoodie takes local paths, file://, memory://, s3://, s3a://, gs://, az://, abfs:// and abfss://)"
                ),
            })
        }
    };
    Ok(TableStorage::new(store, base, location))
}

fn s3(
    url: &url::Url,
    options: &[(String, String)],
) -> object_store::Result<object_store::aws::AmazonS3> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    let bucket = url.host_str().unwrap_or_default();
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    // commits create their instant files if absent: S3's conditional writes (If-None-Match),
    // which object_store sends once asked to
    b = b.with_config(AmazonS3ConfigKey::ConditionalPut, "etag");
    for (k, v) in options {
        if let Ok(key) = k.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            b = b.with_config(key, v);
        }
    }
    b.build()
}

fn gcs(
    url: &url::Url,
    options: &[(String, String)],
) -> object_store::Result<object_store::gcp::GoogleCloudStorage> {
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
    let mut b =
        GoogleCloudStorageBuilder::from_env().with_bucket_name(url.host_str().unwrap_or_default());
    for (k, v) in options {
        if let Ok(key) = k.to_ascii_lowercase().parse::<GoogleConfigKey>() {
            b = b.with_config(key, v);
        }
    }
    b.build()
}

fn azure(
    url: &url::Url,
    options: &[(String, String)],
) -> object_store::Result<object_store::azure::MicrosoftAzure> {
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
    let mut b = MicrosoftAzureBuilder::from_env().with_url(url.as_str());
    for (k, v) in options {
        if let Ok(key) = k.to_ascii_lowercase().parse::<AzureConfigKey>() {
            b = b.with_config(key, v);
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_locations_share_a_store_per_name() {
        let a = open_location("memory://loc-test/t1", &[]).unwrap();
        a.put("x/y", b"hi".to_vec()).await.unwrap();
        let again = open_location("memory://loc-test/t1", &[]).unwrap();
        assert_eq!(again.get("x/y").await.unwrap().as_ref(), b"hi");
        let other = open_location("memory://loc-other/t1", &[]).unwrap();
        assert!(!other.exists("x/y").await.unwrap());
        assert_eq!(again.location(), "memory://loc-test/t1");
    }

    #[test]
    fn schemes_are_told_from_paths() {
        assert_eq!(scheme("s3://b/t"), Some("s3"));
        assert_eq!(scheme("/tmp/t"), None);
        assert_eq!(scheme("relative/dir"), None);
        assert!(open_location("ftp://h/t", &[])
            .unwrap_err()
            .to_string()
            .contains("scheme ftp://"));
        assert!(open_location("file:///tmp/hoodie-loc-test", &[]).is_ok());
    }

    #[test]
    fn object_store_urls_take_options_by_object_stores_names() {
        let s = open_location(
            "s3://bucket/warehouse/t",
            &[
                ("aws_endpoint".into(), "http://127.0.0.1:1".into()),
                ("aws_allow_http".into(), "true".into()),
                ("aws_region".into(), "us-east-1".into()),
                ("hoodie.table.name".into(), "ignored".into()),
            ],
        )
        .unwrap();
        assert_eq!(s.base().as_ref(), "warehouse/t");
        assert!(is_storage_option("aws_endpoint") && is_storage_option("AWS_REGION"));
        assert!(!is_storage_option("primaryKey") && !is_storage_option("hoodie.table.name"));
    }

    #[test]
    fn hadoop_s3a_keys_name_object_store_options() {
        let opt = |k: &str, v: &str| storage_option(k, v);
        assert_eq!(
            opt("spark.hadoop.fs.s3a.endpoint", "http://h:9000"),
            Some(("aws_endpoint".into(), "http://h:9000".into()))
        );
        assert_eq!(
            opt("fs.s3a.access.key", "k"),
            Some(("aws_access_key_id".into(), "k".into()))
        );
        assert_eq!(
            opt("fs.s3a.path.style.access", "true"),
            Some(("aws_virtual_hosted_style_request".into(), "false".into()))
        );
        assert_eq!(
            opt("fs.s3a.connection.ssl.enabled", "false"),
            Some(("aws_allow_http".into(), "true".into()))
        );
        assert_eq!(
            opt("AWS_REGION", "x"),
            Some(("aws_region".into(), "x".into()))
        );
        assert_eq!(opt("fs.s3a.buffer.dir", "/tmp"), None);
        assert_eq!(opt("hoodie.table.name", "t"), None);
    }
}
