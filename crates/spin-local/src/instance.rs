//! One component instance's view of the host: what it may touch ([`ComponentCaps`]), the
//! application's stores ([`Stores`]), and the per-request store data wasmtime hands every
//! host call ([`HostState`]). The runtime builds it; the Spin interfaces (`spin_host`) and
//! WASI read it, so neither needs the other.

use crate::kv::KvStore;
use crate::limits::CpuMeter;
use crate::outbound::AllowList;
use crate::sqlite_db::Database;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use wasmtime::component::ResourceTable;
use wasmtime::StoreLimits;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

/// What one component may touch, from its manifest entry.
#[derive(Debug)]
pub struct ComponentCaps {
    pub id: String,
    pub key_value_stores: HashSet<String>,
    pub sqlite_databases: HashSet<String>,
    pub variables: BTreeMap<String, String>,
    pub allow: AllowList,
}

/// The stores configured for the application, opened once at start-up.
#[derive(Default)]
pub struct Stores {
    pub kv: HashMap<String, Arc<dyn KvStore>>,
    pub sqlite: HashMap<String, Database>,
}

/// Per-request store data.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    /// The outbound policy (the allow-list, service chaining), the runtime's.
    pub(crate) hooks: Box<dyn WasiHttpHooks + Send>,
    pub(crate) caps: Arc<ComponentCaps>,
    pub(crate) stores: Arc<Stores>,
    pub(crate) limits: StoreLimits,
    pub(crate) meter: Arc<CpuMeter>,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut *self.hooks,
        }
    }
}
