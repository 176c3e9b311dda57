//! Who is calling: the principal every chat, event, session and memory is scoped to, and the
//! `/api/auth/*` + `/api/setup` shapes.

use serde::{Deserialize, Serialize};

/// How the deployment authenticates users (Spin variable `auth_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    LocalDev,
    Password,
    Oidc,
    Unconfigured,
}

/// The authenticated caller. `id` is the isolation key for all stored data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    pub id: String,
    pub mode: AuthMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// The single principal of local-dev mode.
pub const LOCAL_DEV_PRINCIPAL_ID: &str = "local-dev";
