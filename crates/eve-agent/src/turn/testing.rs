//! A recording [`TurnHost`] for native tests.

use eve_api::eve::Event;

use crate::tools::builtin::ToolHost;
use crate::turn::host::{Fenced, TurnHost};

/// Records events; stops after a given number of checkpoints (or when `stop_when` says);
/// counts tool side effects; fences after `fence_after` events.
#[derive(Default)]
pub struct Host {
    pub events: Vec<Event>,
    pub checks: usize,
    pub stop_at_check: Option<usize>,
    pub stop_when: Option<fn(&[Event]) -> bool>,
    pub memory: String,
    pub fence_after: Option<usize>,
    pub pauses: usize,
    /// How long each pause was asked to be, in order.
    pub paused_ms: Vec<u64>,
    pub skills: Vec<eve_skills::store::Offered>,
    /// What [`TurnHost::mcp_blocked`] answers for every connection.
    pub mcp_blocked: Option<String>,
}

impl ToolHost for Host {
    fn memory(&mut self) -> Result<String, String> {
        Ok(self.memory.clone())
    }
    fn replace_memory(&mut self, expected: &str, d: &str) -> Result<bool, String> {
        if self.memory != expected {
            return Ok(false);
        }
        self.memory = d.into();
        Ok(true)
    }
    fn pause(&mut self, ms: u64) -> bool {
        self.pauses += 1;
        self.paused_ms.push(ms);
        !self.stop_requested()
    }
    fn now_ms(&mut self) -> i64 {
        1_796_105_696_230
    }
}

impl TurnHost for Host {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        if self.fence_after.is_some_and(|n| self.events.len() >= n) {
            return Err(Fenced);
        }
        self.events.push(event.clone());
        Ok(())
    }
    fn stop_requested(&mut self) -> bool {
        self.checks += 1;
        self.stop_at_check.is_some_and(|n| self.checks >= n)
            || self.stop_when.is_some_and(|f| f(&self.events))
    }
    fn store_output_aside(&mut self, _: &str, _: &str) -> Option<String> {
        None
    }
    fn skills(&mut self) -> Vec<eve_skills::store::Offered> {
        self.skills.clone()
    }
    fn connect_url(&self, id: &str) -> String {
        format!("/eve/v1/session/s/authorizations/{id}")
    }
    fn mcp_http(&mut self) -> &mut dyn crate::connections::mcp::McpHttp {
        self
    }
    fn connection_token(&mut self, _: &str) -> Option<String> {
        None
    }
    fn mcp_blocked(&mut self, _: &str) -> Option<String> {
        self.mcp_blocked.clone()
    }
}

/// No MCP server is configured in these tests; the real servers are in tests/tests/mcp.rs.
impl crate::connections::mcp::McpHttp for Host {
    fn post(
        &mut self,
        url: &str,
        _: &[(String, String)],
        _: &[u8],
    ) -> Result<crate::connections::mcp::HttpAnswer, String> {
        Err(format!("{url} is not reachable in unit tests"))
    }
}

/// A model that answers from a script, one response per call, and keeps every request.
pub struct Scripted {
    pub responses: Vec<Vec<crate::tools::spec::ToolCall>>,
    pub requests: Vec<crate::providers::model::ModelRequest>,
}

impl crate::providers::model::Model for Scripted {
    fn stream(
        &mut self,
        request: &crate::providers::model::ModelRequest,
        on: &mut dyn FnMut(crate::providers::model::ModelEvent) -> crate::providers::model::Flow,
    ) -> Result<(), crate::providers::model::ModelError> {
        use crate::providers::model::ModelEvent;
        self.requests.push(request.clone());
        let calls = if self.responses.is_empty() {
            Vec::new()
        } else {
            self.responses.remove(0)
        };
        if calls.is_empty() {
            on(ModelEvent::TextDelta("done".into()));
        }
        for c in calls {
            on(ModelEvent::ToolCallStarted {
                id: c.id.clone(),
                name: c.name.clone(),
            });
            on(ModelEvent::ToolCallReady(c));
        }
        on(ModelEvent::Finished {
            reason: "stop".into(),
        });
        Ok(())
    }
}

/// A model whose first calls fail with `failures` (each after streaming its `partial` text,
/// when there is one), then answers `done`; it counts its calls.
pub struct Flaky {
    pub failures: Vec<crate::providers::model::ModelError>,
    pub partial: Option<String>,
    pub calls: usize,
}

impl crate::providers::model::Model for Flaky {
    fn stream(
        &mut self,
        _: &crate::providers::model::ModelRequest,
        on: &mut dyn FnMut(crate::providers::model::ModelEvent) -> crate::providers::model::Flow,
    ) -> Result<(), crate::providers::model::ModelError> {
        use crate::providers::model::ModelEvent;
        self.calls += 1;
        if !self.failures.is_empty() {
            if let Some(text) = &self.partial {
                on(ModelEvent::TextDelta(text.clone()));
            }
            return Err(self.failures.remove(0));
        }
        on(ModelEvent::TextDelta("done".into()));
        on(ModelEvent::Finished {
            reason: "stop".into(),
        });
        Ok(())
    }
}
