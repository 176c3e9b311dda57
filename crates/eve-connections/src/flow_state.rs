//! The signed, expiring `state` of a connection sign-in: it names the session, the
//! authorization and the principal (and the client registered with the MCP server's
//! authorization server), so the OAuth callback knows whose sign-in came back.

use serde::{Deserialize, Serialize};

use eve_auth::cookie::SignedValueCodec;

use crate::mcp_oauth::McpFlow;
use crate::oauth::STATE_TTL_SECS;

/// What the signed `state` carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowState {
    pub session_id: String,
    pub authorization_id: String,
    pub principal: String,
    pub exp: u64,
    /// The client registered with an MCP server's authorization server (PKCE sign-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpFlow>,
}

/// Seals and opens flow states (HMAC-SHA256, purpose `connection-oauth`).
pub struct StateCodec(SignedValueCodec);

impl StateCodec {
    /// `key` is the same secret the principal assertions use (see
    /// `connections::jwt::UpstreamJwt::state_codec`).
    pub fn new(key: &str, previous: Option<&str>, binding: &str) -> Self {
        StateCodec(SignedValueCodec::new(
            key,
            previous,
            "connection-oauth",
            binding,
        ))
    }

    pub fn seal(&self, state: &FlowState) -> String {
        self.0
            .seal(&serde_json::to_vec(state).expect("a flow state serializes"))
    }

    /// The state if it is authentic and unexpired.
    pub fn open(&self, value: &str, now_secs: u64) -> Option<FlowState> {
        let (bytes, _) = self.0.open(value).ok()?;
        let state: FlowState = serde_json::from_slice(&bytes).ok()?;
        (state.exp >= now_secs && state.exp <= now_secs + STATE_TTL_SECS + 60).then_some(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_signed_bound_and_expire() {
        let codec = StateCodec::new("k".repeat(40).as_str(), None, "oidc");
        let s = FlowState {
            session_id: "ses_a".into(),
            authorization_id: "auth_b".into(),
            principal: "p".into(),
            exp: 1000,
            mcp: None,
        };
        let sealed = codec.seal(&s);
        assert_eq!(codec.open(&sealed, 900), Some(s.clone()));
        assert_eq!(codec.open(&sealed, 1001), None);
        assert_eq!(
            StateCodec::new("k".repeat(40).as_str(), None, "password").open(&sealed, 900),
            None
        );
        assert_eq!(codec.open("v1.garbage.x", 900), None);
    }
}
