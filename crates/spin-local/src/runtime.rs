//! The application at run time: compiled components, their capabilities, the stores, and how
//! one request becomes one fresh component instance.

use crate::instance::{ComponentCaps, HostState, Stores};
use crate::kv::{KvStore, SqliteKv};
use crate::libsql_db::RemoteDb;
use crate::limits::{CpuMeter, Limits, Metered};
use crate::manifest::{Component as ManifestComponent, FileMount, Manifest, RouteSpec};
use crate::outbound::{chained_component, AllowList};
use crate::routes::{chained_match, Route, RouteMatch, Router};
use crate::runtime_config::{KvBackendConfig, RuntimeConfig, SqliteConfig};
use crate::spin_host::SpinImports;
use crate::sqlite_db::Database;
use crate::stdio::LinePrefixer;
use crate::variables::ResolvedVariables;
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::BodyExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimitsBuilder,
};
use wasmtime_wasi::cli::AsyncStdoutStream;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpHooks, WasiHttpView};

/// How many instances may be alive at once (open streams hold theirs).
const MAX_CONCURRENT_INSTANCES: u32 = 1000;

struct LoadedComponent {
    pre: ProxyPre<HostState>,
    caps: Arc<ComponentCaps>,
    env: Vec<(String, String)>,
    mounts: Vec<(PathBuf, String)>,
}

/// The running application.
pub struct App {
    pub router: Router,
    pub base: String,
    pub stores: Arc<Stores>,
    components: HashMap<String, LoadedComponent>,
    /// Per-request log lines on stderr.
    pub log_requests: bool,
    /// Staging directories for glob file mounts, removed when the app is dropped.
    _staging: Vec<tempfile::TempDir>,
    pub limits: Limits,
}

/// Builds the wasmtime engine: async, pooling allocator, on-disk compilation cache, epoch
/// interruption (the caller starts the ticker: [`crate::limits::start_epoch_ticker`]).
pub fn engine(limits: &Limits) -> Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(MAX_CONCURRENT_INSTANCES)
        .total_core_instances(MAX_CONCURRENT_INSTANCES * 4)
        .total_memories(MAX_CONCURRENT_INSTANCES * 2)
        .total_tables(MAX_CONCURRENT_INSTANCES * 4)
        .max_memories_per_component(4)
        .max_tables_per_component(8)
        .max_core_instances_per_component(32)
        .max_memory_size(limits.max_instance_memory())
        .total_stacks(MAX_CONCURRENT_INSTANCES);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    match wasmtime::Cache::from_file(None) {
        Ok(cache) => {
            config.cache(Some(cache));
        }
        Err(e) => eprintln!("spin-local: compilation cache disabled: {e}"),
    }
    Engine::new(&config).map_err(anyhow::Error::from)
}

/// Everything needed to load an app.
pub struct LoadOptions<'a> {
    pub manifest: &'a Manifest,
    pub variables: &'a ResolvedVariables,
    pub runtime_config: &'a RuntimeConfig,
    pub log_requests: bool,
    pub limits: Limits,
}

/// Compiles and links every component and opens the stores. Fails with a message naming the
/// component and file for anything missing.
pub fn load(engine: &Engine, opts: LoadOptions<'_>) -> Result<Arc<App>> {
    let m = opts.manifest;
    let dir = m.dir().to_path_buf();
    let base = m
        .application
        .trigger
        .as_ref()
        .and_then(|t| t.http.as_ref())
        .and_then(|h| h.base.clone())
        .unwrap_or_else(|| "/".into());
    let stores = open_stores(m, opts.runtime_config)?;

    let mut linker: Linker<HostState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    SpinImports::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;

    let mut components = HashMap::new();
    let mut staging = Vec::new();
    for c in m.components.values() {
        let loaded = load_component(engine, &linker, &dir, c, &opts, &mut staging)?;
        components.insert(c.id.clone(), loaded);
    }

    let mut routes = Vec::new();
    for t in &m.triggers {
        if let RouteSpec::Path(r) = &t.route {
            routes.push(Route::new(&base, r, &t.component)?);
        }
    }
    Ok(Arc::new(App {
        router: Router::new(routes),
        base,
        stores: Arc::new(stores),
        components,
        log_requests: opts.log_requests,
        _staging: staging,
        limits: opts.limits,
    }))
}

/// Opens every store some component uses; each label must be configured.
fn open_stores(m: &Manifest, rc: &RuntimeConfig) -> Result<Stores> {
    let mut stores = Stores::default();
    for c in m.components.values() {
        for label in &c.key_value_stores {
            if stores.kv.contains_key(label) {
                continue;
            }
            let Some(cfg) = rc.key_value_stores.get(label) else {
                bail!(
                    "[component.{}] key_value_stores: no store `{label}` is configured; only `default` exists unless a runtime config (--runtime-config-file) defines [key_value_store.{label}]",
                    c.id
                );
            };
            stores.kv.insert(label.clone(), open_kv(label, cfg)?);
        }
        for label in &c.sqlite_databases {
            let Some(cfg) = rc.sqlite_databases.get(label) else {
                bail!(
                    "[component.{}] sqlite_databases: no database `{label}` is configured; only `default` exists unless a runtime config (--runtime-config-file) defines [sqlite_database.{label}]",
                    c.id
                );
            };
            stores.sqlite.insert(label.clone(), database(cfg));
        }
    }
    Ok(stores)
}

fn open_kv(label: &str, cfg: &KvBackendConfig) -> Result<Arc<dyn KvStore>> {
    Ok(match cfg {
        KvBackendConfig::Sqlite { path } => SqliteKv::open(path, label)?,
        KvBackendConfig::Redis { url } => crate::redis_kv::RedisKv::open(url)
            .with_context(|| format!("[key_value_store.{label}]: cannot connect to {url}"))?,
    })
}

fn database(cfg: &SqliteConfig) -> Database {
    match cfg {
        SqliteConfig::Local {
            path,
            allow_attach_file,
        } => Database::Local {
            path: path.clone(),
            allow_attach_file: *allow_attach_file,
        },
        SqliteConfig::LibSql { url, token } => {
            Database::Remote(RemoteDb::new(url.clone(), token.clone()))
        }
    }
}

/// Compiles and links one component, and resolves its grants, environment and files.
fn load_component(
    engine: &Engine,
    linker: &Linker<HostState>,
    dir: &Path,
    c: &ManifestComponent,
    opts: &LoadOptions<'_>,
    staging: &mut Vec<tempfile::TempDir>,
) -> Result<LoadedComponent> {
    let pre = compile(engine, linker, dir, c, opts.log_requests)?;
    let allow_entries = c
        .allowed_outbound_hosts
        .iter()
        .map(|h| crate::variables::render(h, &opts.variables.app))
        .collect::<Result<Vec<_>>>()?;
    let allow = AllowList::parse(&allow_entries)
        .with_context(|| format!("[component.{}] allowed_outbound_hosts", c.id))?;
    let mounts = prepare_mounts(dir, c, staging)?;
    let caps = Arc::new(ComponentCaps {
        id: c.id.clone(),
        key_value_stores: c.key_value_stores.iter().cloned().collect(),
        sqlite_databases: c.sqlite_databases.iter().cloned().collect(),
        variables: opts
            .variables
            .components
            .get(&c.id)
            .cloned()
            .unwrap_or_default(),
        allow,
    });
    Ok(LoadedComponent {
        pre,
        caps,
        env: c
            .environment
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        mounts,
    })
}

/// The component's `.wasm`, compiled and linked against this host's interfaces.
fn compile(
    engine: &Engine,
    linker: &Linker<HostState>,
    dir: &Path,
    c: &ManifestComponent,
    log: bool,
) -> Result<ProxyPre<HostState>> {
    let path = dir.join(&c.source);
    if !path.is_file() {
        let how = match &c.build {
            Some(b) => format!(
                "build it with `spin-local build` (runs `{}`)",
                b.command.commands().join(" && ")
            ),
            None => {
                "the component has no [component.<id>.build] command; produce the file first".into()
            }
        };
        bail!(
            "[component.{}] source {} does not exist: {how}",
            c.id,
            path.display()
        );
    }
    let started = Instant::now();
    let component = Component::from_file(engine, &path)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("[component.{}]: cannot compile {}", c.id, path.display()))?;
    // A component imports only the interfaces it calls, so one that imports an interface
    // this host lacks (redis, mqtt, llm, postgres, ...) would fail at its first call:
    // refuse it now, naming the interface.
    let pre = linker
        .instantiate_pre(&component)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("[component.{}]: cannot link {} (it imports an interface this host does not provide)", c.id, path.display()))?;
    let pre = ProxyPre::new(pre)
        .map_err(anyhow::Error::from)
        .with_context(|| {
            format!(
                "[component.{}]: not an HTTP component (no wasi:http/incoming-handler export)",
                c.id
            )
        })?;
    if log {
        eprintln!("spin-local: compiled {} in {:?}", c.id, started.elapsed());
    }
    Ok(pre)
}

/// Resolves `files` into (host dir, guest path) preopens. Directory mappings are mounted
/// directly (edits show up live, as with `spin up --direct-mounts`; plain `spin up` copies
/// them); glob entries are copied into a staging directory mounted at `/`.
fn prepare_mounts(
    dir: &Path,
    c: &crate::manifest::Component,
    staging: &mut Vec<tempfile::TempDir>,
) -> Result<Vec<(PathBuf, String)>> {
    let mut mounts = Vec::new();
    let excludes: Vec<glob::Pattern> = c
        .exclude_files
        .iter()
        .map(|p| {
            glob::Pattern::new(p)
                .with_context(|| format!("[component.{}] exclude_files: bad pattern `{p}`", c.id))
        })
        .collect::<Result<_>>()?;
    let mut stage: Option<PathBuf> = None;
    for f in &c.files {
        match f {
            FileMount::Dir {
                source,
                destination,
            } => {
                let host = dir.join(source);
                if !host.is_dir() {
                    bail!(
                        "[component.{}] files: source directory {} does not exist",
                        c.id,
                        host.display()
                    );
                }
                if excludes.is_empty() {
                    mounts.push((host, destination.clone()));
                } else {
                    let target = stage_dir(&mut stage, staging, &c.id)?
                        .join(destination.trim_start_matches('/'));
                    copy_tree(&host, &host, &target, &excludes)?;
                }
            }
            FileMount::Glob(pattern) => {
                let full = dir.join(pattern);
                let entries = glob::glob(&full.to_string_lossy()).with_context(|| {
                    format!("[component.{}] files: bad pattern `{pattern}`", c.id)
                })?;
                let root = stage_dir(&mut stage, staging, &c.id)?.to_path_buf();
                let app_dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                for entry in entries {
                    let p = entry?;
                    if !p.is_file() {
                        continue;
                    }
                    // A symlink inside the app must not smuggle in a file from outside it.
                    if !p
                        .canonicalize()
                        .is_ok_and(|real| real.starts_with(&app_dir))
                    {
                        bail!(
                            "[component.{}] files: {} leads outside the application directory",
                            c.id,
                            p.display()
                        );
                    }
                    let rel = p.strip_prefix(dir).unwrap_or(&p).to_path_buf();
                    if excludes.iter().any(|e| e.matches_path(&rel)) {
                        continue;
                    }
                    let to = root.join(&rel);
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::copy(&p, &to)?;
                }
            }
        }
    }
    if let Some(s) = stage {
        mounts.push((s, "/".into()));
    }
    Ok(mounts)
}

/// The component's staging folder, made on first use: a new, private (0700), randomly named
/// folder in the temp dir, as `spin up`'s `spinup-*` working folder. A predictable name
/// would let another local user create it first (or a link by that name) and plant or read
/// the files a component serves.
fn stage_dir<'a>(
    stage: &'a mut Option<PathBuf>,
    all: &mut Vec<tempfile::TempDir>,
    id: &str,
) -> Result<&'a Path> {
    if stage.is_none() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix(&format!("spin-local-files-{id}-"))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .with_context(|| format!("[component.{id}] files: cannot create a staging folder"))?;
        *stage = Some(dir.path().to_path_buf());
        all.push(dir);
    }
    Ok(stage.as_deref().expect("just set"))
}

fn copy_tree(root: &Path, from: &Path, to: &Path, excludes: &[glob::Pattern]) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let p = entry.path();
        let rel = p.strip_prefix(root).unwrap_or(&p);
        if excludes.iter().any(|e| e.matches_path(rel)) {
            continue;
        }
        if p.is_dir() {
            copy_tree(root, &p, &to.join(entry.file_name()), excludes)?;
        } else {
            std::fs::copy(&p, to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// A trap for the log: the CPU budget by name when that is what stopped the guest.
fn trap_text(meter: &CpuMeter, e: &wasmtime::Error) -> String {
    if meter.exceeded() {
        format!(
            "used up its CPU time ({:?}, --cpu-limit-secs) and was stopped",
            meter.limit()
        )
    } else {
        format!("{e:?}")
    }
}

/// Where a request comes from, for `spin-client-addr` and `spin-full-url`.
pub struct Origin {
    pub scheme: &'static str,
    pub authority: String,
    pub client_addr: String,
}

pub type HostResponse = http::Response<HyperOutgoingBody>;

fn simple_response(status: u16) -> HostResponse {
    http::Response::builder()
        .status(status)
        .body(
            http_body_util::Empty::<Bytes>::new()
                .map_err(|e| match e {})
                .boxed_unsync(),
        )
        .expect("static response parts are valid")
}

/// A component instance handling one request.
type Task = tokio::task::JoinHandle<wasmtime::Result<()>>;

/// A started instance: its task, where its response arrives, its CPU meter.
struct Running {
    id: String,
    task: Task,
    receiver: tokio::sync::oneshot::Receiver<
        Result<HostResponse, wasmtime_wasi_http::p2::bindings::http::types::ErrorCode>,
    >,
    meter: Arc<CpuMeter>,
    started: Instant,
}

/// Drops hop-by-hop headers and any `spin-*` header a client sent (Spin owns these names: a
/// client cannot forge them), then sets Spin's request headers for this route.
fn set_spin_headers(
    h: &mut http::HeaderMap,
    m: &RouteMatch,
    base: &str,
    full_url: &str,
    client_addr: &str,
) {
    for name in [
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "transfer-encoding",
        "upgrade",
    ] {
        h.remove(name);
    }
    let forged: Vec<_> = h
        .keys()
        .filter(|k| k.as_str().starts_with("spin-"))
        .cloned()
        .collect();
    for k in forged {
        h.remove(k);
    }
    let mut set = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            h.insert(n, v);
        }
    };
    set("spin-full-url", full_url);
    set("spin-path-info", &m.path_info);
    set("spin-matched-route", &m.matched_route);
    set("spin-component-route", &m.component_route);
    set("spin-raw-component-route", &m.matched_route);
    set("spin-base-path", base);
    set("spin-client-addr", client_addr);
    for (name, value) in &m.params {
        set(
            &format!("spin-path-match-{}", name.to_ascii_lowercase()),
            value,
        );
    }
}

impl App {
    /// Serves one request from outside: route, set the `spin-*` headers, run the component.
    pub async fn handle_external<B>(
        self: &Arc<Self>,
        req: http::Request<B>,
        origin: Origin,
    ) -> HostResponse
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let Some(m) = self.router.route(&path) else {
            if self.log_requests {
                eprintln!("{method} {path} -> (no route) 404 {:?}", started.elapsed());
            }
            return simple_response(404);
        };
        let path_and_query = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or(path.clone());
        let full_url = format!("{}://{}{}", origin.scheme, origin.authority, path_and_query);
        let uri = full_url.clone();
        let resp = self
            .invoke(&m, req, uri, &full_url, &origin.client_addr)
            .await;
        if self.log_requests {
            eprintln!(
                "{method} {path} -> {} {} {:?}",
                m.component,
                resp.status().as_u16(),
                started.elapsed()
            );
        }
        resp
    }

    /// Serves a service-chaining request `http://<component>.spin.internal/...` in-process.
    async fn handle_chained(
        self: &Arc<Self>,
        component: &str,
        req: http::Request<HyperOutgoingBody>,
    ) -> Result<HostResponse, wasmtime_wasi_http::Error> {
        if !self.components.contains_key(component) {
            return Err(wasmtime_wasi_http::Error::DestinationNotFound);
        }
        let started = Instant::now();
        let path = req.uri().path().to_string();
        let pq = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or(path.clone());
        let m = chained_match(component, &path);
        let uri = req.uri().to_string();
        let full_url = format!("http://localhost{pq}");
        let method = req.method().clone();
        let resp = self.invoke(&m, req, uri, &full_url, "0.0.0.0:0").await;
        if self.log_requests {
            eprintln!(
                "{method} {path} -> {component} (chained) {} {:?}",
                resp.status().as_u16(),
                started.elapsed()
            );
        }
        Ok(resp)
    }

    /// Runs `m.component` on a fresh instance. The response is returned as soon as the
    /// component sets it; its body streams while the instance keeps running, and the
    /// instance runs to completion even if nobody reads the body any more.
    async fn invoke<B>(
        self: &Arc<Self>,
        m: &RouteMatch,
        req: http::Request<B>,
        uri: String,
        full_url: &str,
        client_addr: &str,
    ) -> HostResponse
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let Some(loaded) = self.components.get(&m.component) else {
            return simple_response(500);
        };
        let (mut parts, body) = req.into_parts();
        match uri.parse::<http::Uri>() {
            Ok(u) => parts.uri = u,
            Err(_) => return simple_response(400),
        }
        set_spin_headers(&mut parts.headers, m, &self.base, full_url, client_addr);
        let req = http::Request::from_parts(parts, body);
        match self.start(loaded, &m.component, req) {
            Ok(running) => self.await_response(running).await,
            Err(status) => simple_response(status),
        }
    }

    /// Instantiates the component on a fresh store and calls its handler on a task of its
    /// own, under the CPU meter; the response arrives on the returned channel. `Err` is the
    /// status to answer when the instance cannot be started.
    fn start<B>(
        self: &Arc<Self>,
        loaded: &LoadedComponent,
        id: &str,
        req: http::Request<B>,
    ) -> Result<Running, u16>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let state = self.new_state(loaded).map_err(|e| {
            eprintln!("[{id}] cannot prepare instance: {e:#}");
            500u16
        })?;
        let started = Instant::now();
        let meter = state.meter.clone();
        let mut store = Store::new(loaded.pre.engine(), state);
        store.limiter(|s| &mut s.limits);
        // Checked every epoch tick while guest code runs: past its CPU budget the instance
        // traps; below it, it yields so one busy guest cannot hold a worker thread.
        store.epoch_deadline_callback(|ctx| {
            if ctx.data().meter.check(Instant::now()) {
                Ok(wasmtime::UpdateDeadline::Interrupt)
            } else {
                Ok(wasmtime::UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let incoming = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, req)
            .map_err(|e| {
                eprintln!("[{id}] bad request: {e}");
                400u16
            })?;
        let out = store
            .data_mut()
            .http()
            .new_response_outparam(sender)
            .map_err(|e| {
                eprintln!("[{id}] cannot prepare response: {e}");
                500u16
            })?;
        let pre = loaded.pre.clone();
        let task = tokio::task::spawn(Metered::new(meter.clone(), async move {
            let proxy = pre.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, incoming, out)
                .await
        }));
        Ok(Running {
            id: id.to_string(),
            task,
            receiver,
            meter,
            started,
        })
    }

    /// Waits for the response within the request timeout; once it is set, the instance runs
    /// on for the rest of its lifetime ([`App::watch`]).
    async fn await_response(&self, r: Running) -> HostResponse {
        let Running {
            id,
            task,
            receiver,
            meter,
            started,
        } = r;
        let request_timeout = self.limits.request_timeout();
        match tokio::time::timeout(request_timeout, receiver).await {
            Ok(Ok(Ok(resp))) => {
                self.watch(id, task, meter, started);
                resp
            }
            Ok(Ok(Err(code))) => {
                eprintln!("[{id}] component answered with an error: {code:?}");
                self.watch(id, task, meter, started);
                simple_response(500)
            }
            Ok(Err(_)) => {
                match task.await {
                    Ok(Ok(())) => eprintln!("[{id}] component returned without setting a response"),
                    Ok(Err(e)) => eprintln!("[{id}] component trapped: {}", trap_text(&meter, &e)),
                    Err(e) => eprintln!("[{id}] component task failed: {e}"),
                }
                simple_response(500)
            }
            Err(_) => {
                task.abort();
                eprintln!(
                    "[{id}] no response within {request_timeout:?} (--request-timeout-secs); instance stopped"
                );
                simple_response(504)
            }
        }
    }

    /// After the response is set the instance may run on (a streamed body, work after the
    /// answer): it gets the rest of its lifetime. Aborting drops the store, which ends the
    /// body, so a reader sees it cut.
    fn watch(&self, id: String, mut task: Task, meter: Arc<CpuMeter>, started: Instant) {
        let lifetime = self.limits.max_instance_lifetime();
        let remaining = lifetime.saturating_sub(started.elapsed());
        tokio::spawn(async move {
            match tokio::time::timeout(remaining, &mut task).await {
                Ok(Ok(Err(e))) => {
                    eprintln!(
                        "[{id}] component failed after responding: {}",
                        trap_text(&meter, &e)
                    )
                }
                Err(_) => {
                    task.abort();
                    eprintln!(
                        "[{id}] response body cut: the instance reached its lifetime ({lifetime:?}, --max-instance-lifetime-secs)"
                    );
                }
                _ => {}
            }
        });
    }

    fn new_state(self: &Arc<Self>, loaded: &LoadedComponent) -> Result<HostState> {
        let id = &loaded.caps.id;
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(AsyncStdoutStream::new(1 << 16, LinePrefixer::stdout(id)))
            .stderr(AsyncStdoutStream::new(1 << 16, LinePrefixer::stderr(id)))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for (k, v) in &loaded.env {
            wasi.env(k, v);
        }
        for (host, guest) in &loaded.mounts {
            wasi.preopened_dir(host, guest, FsPerms::ReadOnly)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("cannot mount {}", host.display()))?;
        }
        Ok(HostState {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            hooks: Box::new(OutboundHooks {
                app: self.clone(),
                caps: loaded.caps.clone(),
            }),
            caps: loaded.caps.clone(),
            stores: self.stores.clone(),
            limits: StoreLimitsBuilder::new()
                .memory_size(self.limits.max_instance_memory())
                .build(),
            meter: CpuMeter::new(self.limits.cpu_limit()),
        })
    }

    pub fn component_ids(&self) -> Vec<String> {
        let mut v: Vec<_> = self.components.keys().cloned().collect();
        v.sort();
        v
    }
}

/// Outbound HTTP policy for one instance: the component's allow-list, and in-process service
/// chaining for `*.spin.internal`.
pub struct OutboundHooks {
    app: Arc<App>,
    caps: Arc<ComponentCaps>,
}

type SendFuture = Box<
    dyn std::future::Future<
            Output = Result<
                (
                    http::Response<HyperOutgoingBody>,
                    Box<
                        dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>>
                            + Send,
                    >,
                ),
                wasmtime_wasi_http::Error,
            >,
        > + Send,
>;

impl WasiHttpHooks for OutboundHooks {
    fn send_request(
        &mut self,
        mut request: http::Request<HyperOutgoingBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> SendFuture {
        drop(fut);
        let uri = request.uri().clone();
        let scheme = uri.scheme_str().unwrap_or("http").to_ascii_lowercase();
        let host = uri.host().unwrap_or("").to_string();
        let port = uri.port_u16();
        if !self.caps.allow.allows(&scheme, &host, port) {
            if self.app.log_requests {
                eprintln!("[{}] outbound request to {scheme}://{host} denied: not in allowed_outbound_hosts", self.caps.id);
            }
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        if let Some(target) = chained_component(&host) {
            let app = self.app.clone();
            let target = target.to_string();
            request.headers_mut().remove(http::header::HOST);
            return Box::new(async move {
                let resp = app.handle_chained(&target, request).await?;
                let done: Box<
                    dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send,
                > = Box::new(async { Ok(()) });
                Ok((resp, done))
            });
        }
        Box::new(async move {
            let (res, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            let io: Box<
                dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send,
            > = Box::new(io);
            Ok((res.map(|b| b.boxed_unsync()), io))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19, item 8: the staging folder is new, private and unpredictable; a folder (or a
    /// link) another user made at the old predictable name is never used.
    #[test]
    fn glob_files_are_staged_in_a_new_private_randomly_named_folder() {
        use std::os::unix::fs::PermissionsExt;
        let app = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(app.path().join("assets")).unwrap();
        std::fs::write(app.path().join("assets/a.css"), "a{}").unwrap();
        let manifest = crate::manifest::parse(
            "spin_manifest_version = 2\n[application]\nname = \"a\"\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"web\"\n[component.web]\nsource = \"web.wasm\"\nfiles = [\"assets/*.css\"]\n",
            &app.path().join("spin.toml"),
        )
        .unwrap();
        let c = &manifest.components["web"];
        // What another local user could have prepared under the old name.
        let planted =
            std::env::temp_dir().join(format!("spin-local-files-{}-web", std::process::id()));
        let _ = std::fs::create_dir_all(&planted);
        let mut staging = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..2 {
            let mounts = prepare_mounts(app.path(), c, &mut staging).unwrap();
            assert_eq!(mounts.len(), 1);
            let (dir, guest) = &mounts[0];
            assert_eq!(guest, "/");
            assert_ne!(dir, &planted, "the predictable folder was used");
            assert!(dir.starts_with(std::env::temp_dir()), "{}", dir.display());
            let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}: mode {mode:o}", dir.display());
            assert_eq!(
                std::fs::read_to_string(dir.join("assets/a.css")).unwrap(),
                "a{}"
            );
            seen.push(dir.clone());
        }
        assert_ne!(seen[0], seen[1], "two loads got the same folder");
        let _ = std::fs::remove_dir_all(&planted);
        // The folders go with the app.
        drop(staging);
        assert!(seen.iter().all(|d| !d.exists()));
    }

    /// Stricter than Spin (which compares the matched path, not its target): a glob match
    /// that is a symlink to a file outside the application directory stops start-up.
    #[test]
    fn a_glob_match_linking_out_of_the_app_directory_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s3cret").unwrap();
        let app = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(app.path().join("assets")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            app.path().join("assets/a.txt"),
        )
        .unwrap();
        let manifest = crate::manifest::parse(
            "spin_manifest_version = 2\n[application]\nname = \"a\"\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"web\"\n[component.web]\nsource = \"web.wasm\"\nfiles = [\"assets/*\"]\n",
            &app.path().join("spin.toml"),
        )
        .unwrap();
        let err = prepare_mounts(app.path(), &manifest.components["web"], &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[component.web]")
                && err.contains("leads outside the application directory"),
            "{err}"
        );
    }
}
