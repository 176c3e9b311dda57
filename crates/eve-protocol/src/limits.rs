//! Every size limit of a request to the agent, in one place: the proxy and the agent refuse
//! with the same numbers.

/// The longest message, in characters (the seed's limit; eve sets none).
pub const MAX_MESSAGE_CHARS: usize = 8000;
/// The longest `clientContext`, in characters.
pub const MAX_CLIENT_CONTEXT_CHARS: usize = 4000;
/// Most `inputResponses` in one request.
pub const MAX_INPUT_RESPONSES: usize = 16;
/// Most parts in one message.
pub const MAX_PARTS: usize = 16;
/// The largest request body; a message route's may be larger by its files
/// (`protocol::uploads::UploadPolicy::message_body_cap`).
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The largest body any configuration lets a message route take.
pub const MAX_MESSAGE_BODY_BYTES: usize = MAX_BODY_BYTES + (MAX_MAX_BYTES as usize).div_ceil(3) * 4;
/// The largest cap `attachment_max_bytes` may set: a message is held in memory a few times
/// over while it is parsed and kept (the host gives an instance 256 MiB).
pub const MAX_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// The longest `model` id accepted.
pub const MAX_MODEL_ID_CHARS: usize = 200;
