//! Request authentication shared by every component. PLACEHOLDER until the auth issue lands:
//! only local-dev mode is recognised; every other mode answers 401.

use eve_api::auth::{AuthMode, Principal, LOCAL_DEV_PRINCIPAL_ID};
use eve_api::ApiError;
use spin_sdk::http::Request;

/// The signed-in principal of this request, or 401.
pub fn authenticate(_req: &Request) -> Result<Principal, ApiError> {
    let mode = spin_sdk::variables::get("auth_mode").unwrap_or_default();
    if mode == "local-dev" {
        return Ok(Principal {
            id: LOCAL_DEV_PRINCIPAL_ID.into(),
            mode: AuthMode::LocalDev,
            name: Some("Local developer".into()),
            email: None,
        });
    }
    Err(ApiError::unauthorized())
}
