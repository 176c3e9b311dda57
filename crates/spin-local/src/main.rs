//! `spin-local`: runs a Spin application (`spin.toml`) on this machine without the Spin CLI.
//!
//! ```text
//! spin-local up [--from spin.toml] [--listen 127.0.0.1:3000] [--build]
//!               [--variable name=value]... [--runtime-config-file rc.toml] [--state-dir .spin]
//! spin-local build [--from spin.toml] [--component id]...
//! ```
//!
//! As `spin up` does, `up` is a parent that runs the build (with `--build`) and then forks
//! the HTTP trigger, `spin-local trigger <up's flags>`, which loads the app and serves it.
//! The child stays in the parent's process group; Ctrl-C, SIGTERM or SIGHUP of the parent is
//! passed on to it as SIGTERM, and the parent exits with the child's status. SIGKILL of the
//! parent alone leaves the child serving, exactly as with Spin: kill the process group.

mod builder;
mod instance;
mod kv;
mod libsql_db;
mod limits;
mod manifest;
mod outbound;
#[cfg(test)]
mod proptests;
mod redis_kv;
mod routes;
mod runtime;
mod runtime_config;
mod server;
mod spin_host;
mod sql_value;
mod sqlite_db;
mod stdio;
mod template;
mod variables;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "spin-local",
    version,
    about = "Run a Spin application locally, as `spin up` does"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the application (after running the build commands with --build), as `spin up`.
    Up(UpArgs),
    /// The HTTP trigger that `up` forks (as `spin up` runs `spin trigger http`): loads the app
    /// and serves it, never building.
    #[command(hide = true)]
    Trigger(UpArgs),
    /// Run each component's build command, as `spin build`.
    Build {
        /// The manifest.
        #[arg(short = 'f', long = "from", default_value = "spin.toml")]
        from: PathBuf,
        /// Build only these components.
        #[arg(short = 'c', long = "component")]
        components: Vec<String>,
    },
}

#[derive(clap::Args)]
struct UpArgs {
    /// The manifest.
    #[arg(short = 'f', long = "from", default_value = "spin.toml")]
    from: PathBuf,
    /// Address to listen on; port 0 picks a free port (printed on the `Serving` line).
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Run the build commands first, as `spin up --build` (without it, the existing .wasm
    /// files are served, as `spin up` does).
    #[arg(long)]
    build: bool,
    /// Accepted for scripts written before `up` stopped building by default; does nothing.
    #[arg(long, hide = true)]
    skip_build: bool,
    /// Set an application variable (repeatable); wins over SPIN_VARIABLE_<NAME>.
    #[arg(long = "variable", value_parser = variables::parse_flag)]
    variables: Vec<(String, String)>,
    /// Spin runtime-config file for key-value stores and SQLite databases.
    #[arg(long)]
    runtime_config_file: Option<PathBuf>,
    /// Where default stores live (Spin's `.spin/` next to the manifest by default).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Do not print a line per request.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    limits: limits::Limits,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Build { from, components } => {
            manifest::load(&from).and_then(|m| builder::build(&m, &components))
        }
        Cmd::Up(args) => up(args),
        Cmd::Trigger(args) => trigger(args),
    };
    if let Err(e) = result {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

/// `up`: builds when asked, then runs the trigger as a child process and waits for it.
fn up(args: UpArgs) -> Result<()> {
    if args.build && !args.skip_build {
        let manifest = manifest::load(&args.from)?;
        builder::build(&manifest, &[])?;
    }
    // The child gets up's command line unchanged, with `trigger` for `up` (it ignores
    // `--build`); it reports its own start-up errors on the shared stderr.
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let up_at = argv
        .iter()
        .position(|a| a == "up")
        .context("`up` not found on the command line")?;
    argv[up_at] = "trigger".into();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start tokio")?;
    let code = rt.block_on(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let mut child = tokio::process::Command::new(exe)
            .args(argv)
            .spawn()
            .context("cannot start the trigger process")?;
        let pid = child.id().context("the trigger process has no id")?;
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut hup = signal(SignalKind::hangup())?;
        loop {
            tokio::select! {
                status = child.wait() => {
                    let status = status?;
                    return anyhow::Ok(status.code().unwrap_or(1));
                }
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = hup.recv() => {}
            }
            // As `spin up`: a signal to the parent stops the trigger (SIGTERM), and the parent
            // exits once it has.
            // SAFETY: kill(2) with a pid of our own child and a valid signal number.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
        }
    })?;
    std::process::exit(code)
}

/// The trigger: loads the app and serves it until Ctrl-C or SIGTERM.
fn trigger(args: UpArgs) -> Result<()> {
    let manifest = manifest::load(&args.from)?;
    let flags: BTreeMap<String, String> = args.variables.into_iter().collect();
    let env: HashMap<String, String> = std::env::vars().collect();
    let vars = variables::resolve(&manifest, &flags, &env)?;
    let state_dir = args
        .state_dir
        .unwrap_or_else(|| manifest.dir().join(".spin"));
    let rc = match &args.runtime_config_file {
        Some(f) => runtime_config::RuntimeConfig::load(f, &state_dir)?,
        None => runtime_config::RuntimeConfig::defaults(&state_dir),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start tokio")?;
    rt.block_on(async move {
        let engine = runtime::engine(&args.limits)?;
        limits::start_epoch_ticker(&engine);
        let app = runtime::load(
            &engine,
            runtime::LoadOptions {
                manifest: &manifest,
                variables: &vars,
                runtime_config: &rc,
                log_requests: !args.quiet,
                limits: args.limits,
            },
        )?;
        let listener = server::bind(args.listen).await?;
        let addr = listener.local_addr()?;
        println!("Serving {} on http://{addr}", manifest.application.name);
        println!("Serving http://{addr}");
        println!("Available Routes:");
        for r in app.router.routes() {
            println!("  {}: http://{addr}{}", r.component, r.raw);
        }
        for id in app.component_ids() {
            if !app.router.routes().iter().any(|r| r.component == id) {
                println!("  {id}: (private; http://{id}.spin.internal)");
            }
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        server::serve(app, listener).await
    })
}
