//! The `/api/projects` shapes (issue 21; docs/projects.md): projects, their files, and what a
//! chat carries of its project.

use serde::{Deserialize, Serialize};

/// A project: a name, the instructions added to every turn of its chats, its times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: String,
    pub name: String,
    /// Added to the agent's instructions on every turn of every chat in the project.
    pub instructions: String,
    pub created_at: String,
    pub updated_at: String,
}

/// `POST /api/projects` `{ name, instructions? }` → 201 `{ project }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CreateProjectRequest {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `PATCH /api/projects/:id` `{ name?, instructions? }` → 200 `{ project }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProjectRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `{ project }`: the answer of create, get, update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectResponse {
    pub project: Project,
}

/// `GET /api/projects` → every project of the caller, most recently updated first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectList {
    pub projects: Vec<Project>,
}

/// Who a file comes from: the user, the agent (a working file), or the user's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSource {
    /// Uploaded by the user: the agent reads it, never writes it.
    UserUpload,
    /// Written by the agent (or a large tool output kept aside): the agent may rewrite it.
    Temp,
    /// A temp file the user marked final: the agent reads it, never writes it.
    FinalOutput,
}

impl FileSource {
    /// The value stored in `project_file.source`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileSource::UserUpload => "user_upload",
            FileSource::Temp => "temp",
            FileSource::FinalOutput => "final_output",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "user_upload" => Some(FileSource::UserUpload),
            "temp" => Some(FileSource::Temp),
            "final_output" => Some(FileSource::FinalOutput),
            _ => None,
        }
    }
}

/// What the file list shows of a file's content, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum FilePreview {
    /// An image (its bytes match its type). `thumbnailUrl` is the download URL when the image
    /// is small enough to show as its own thumbnail (≤ 1 MiB), else absent.
    #[serde(rename_all = "camelCase")]
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thumbnail_url: Option<String>,
    },
    /// Text: its first lines (at most 10 lines, 1,000 characters).
    #[serde(rename_all = "camelCase")]
    Text { text: String },
    /// A PDF and its page count (counted cheaply; 0 when it cannot be told).
    #[serde(rename_all = "camelCase")]
    Pdf { pages: u32 },
    /// Anything else.
    Other,
}

/// A project file as lists show it (never its bytes: download them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectFile {
    pub id: String,
    /// Sanitised for display: a single name, no path, no control characters.
    pub name: String,
    pub media_type: String,
    pub size: u64,
    pub source: FileSource,
    pub preview: FilePreview,
    /// `GET` it for the bytes (`content-disposition: attachment`; images inline).
    pub download_url: String,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /api/projects/:id/files` → every file of the project, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileList {
    pub files: Vec<ProjectFile>,
}

/// `{ file }`: the answer of an upload, a get and a mark-final.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileResponse {
    pub file: ProjectFile,
}

/// The header that names an uploaded file (percent-encoded UTF-8; the body is the raw bytes
/// and `content-type` their media type).
pub const FILE_NAME_HEADER: &str = "x-file-name";
