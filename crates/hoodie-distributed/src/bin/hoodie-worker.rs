//! `hoodie-worker`: a worker that runs the stages of hoodie statements sent by sessions
//! started with `--workers` (the shell, `hoodie-slt`) or `hoodie_distributed::with_workers`.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;

/// hoodie-worker: runs stages of hoodie statements for sessions with workers.
///
/// Reads each table's files from the location the session names, with this worker's own
/// storage options (--option) and environment (AWS_*, GOOGLE_*, AZURE_*): no credentials
/// travel with a plan.
#[derive(Debug, Parser)]
#[command(name = "hoodie-worker", version, about)]
struct Args {
    /// Address to serve on, e.g. 0.0.0.0:50051 (port 0: any free port, printed on stdout)
    #[arg(long, value_name = "HOST:PORT")]
    listen: SocketAddr,

    /// An object-store option for the tables' locations (aws_endpoint, aws_region,
    /// fs.s3a.endpoint, google_service_account, azure_storage_account_name, ...) (may be
    /// repeated)
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_option)]
    options: Vec<(String, String)>,
}

fn parse_option(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hoodie-worker: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let options = (args.options.iter())
        .filter_map(|(k, v)| hoodie_format::location::storage_option(k, v))
        .collect();
    let worker = hoodie_distributed::worker(options)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    // the address actually bound (port 0 picks one), for whoever started the worker
    println!("{}", listener.local_addr()?);
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
        .await?;
    Ok(())
}
