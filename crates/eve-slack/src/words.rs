//! Everything the channel writes in Slack: eve's own English (the default, compared word for
//! word with eve's `slackChannel` side by side) and Simplified Chinese (variable
//! `slack_language = zh`).

/// One language's words.
#[derive(Debug, PartialEq, Eq)]
pub struct Words {
    /// The status while the agent works, and once a reply grows long.
    pub thinking: &'static str,
    pub writing: &'static str,
    /// A failed turn and a failed session: the opening (the error's hint follows it), the
    /// next step.
    pub turn_failed: (&'static str, &'static str),
    pub session_failed: (&'static str, &'static str),
    /// What ends the opening sentence.
    pub full_stop: &'static str,
    /// The note posted with a long reply's snippet.
    pub snippet_note: &'static str,
    /// An approval card's subtext.
    pub paused: &'static str,
    pub cancel: &'static str,
    pub approve: &'static str,
    /// An approval card settled without an answer (the person wrote something else instead).
    pub no_longer_needed: &'static str,
    /// Said in the thread when someone other than the person who asked answers an approval.
    pub only_requester: &'static str,
    /// A card once answered: its text (`answered` + the answer), and around `<@user>`.
    pub answered: &'static str,
    pub answered_by: (&'static str, &'static str),
    /// A free-form question: its button, the modal's default title, the input's label and
    /// placeholder, the submit button; "Answered by <@user>" once answered.
    pub type_answer: &'static str,
    pub your_answer: &'static str,
    pub answer_label: &'static str,
    pub answer_placeholder: &'static str,
    pub submit: &'static str,
    pub answered_by_context: &'static str,
    /// An approval's collapsed tool input.
    pub tool_input: &'static str,
    /// A final reply that could not be delivered: around the error id.
    pub undelivered: (&'static str, &'static str),
}

pub const EN: Words = Words {
    thinking: "Thinking...",
    writing: "Writing a reply...",
    turn_failed: (
        "I hit an error while handling your request",
        "Please try again, rephrase, or reach out if it keeps failing.",
    ),
    session_failed: (
        "This session couldn't recover from an error",
        "Start a new thread to continue — I can't pick this one back up.",
    ),
    full_stop: ".",
    snippet_note: "Here's a snippet with the full response.",
    paused: "I've paused until someone approves or cancels.",
    cancel: "Cancel",
    approve: "Approve",
    no_longer_needed: "No longer needed",
    only_requester: "Only the person who requested this action can respond to this approval.",
    answered: "Answered: ",
    answered_by: (" by <@", ">"),
    type_answer: "Type your answer",
    your_answer: "Your answer",
    answer_label: "Answer",
    answer_placeholder: "Type your answer here...",
    submit: "Submit",
    answered_by_context: "Answered by ",
    tool_input: "Tool input",
    undelivered: (
        "I finished, but couldn't deliver my answer in Slack (error id `",
        "`). Please ask me to resend it.",
    ),
};

pub const ZH: Words = Words {
    thinking: "思考中...",
    writing: "正在撰写回复...",
    turn_failed: (
        "处理你的请求时出错了",
        "请重试或换个说法；如果一直失败，请联系管理员。",
    ),
    session_failed: (
        "这个会话因错误无法恢复",
        "请开一个新话题继续 —— 这个话题无法再接着进行。",
    ),
    full_stop: "。",
    snippet_note: "完整回复见这个代码片段。",
    paused: "我已暂停，等待有人批准或取消。",
    cancel: "取消",
    approve: "批准",
    no_longer_needed: "已不再需要",
    only_requester: "只有发起这个操作的人才能回应这个审批。",
    answered: "已回答：",
    answered_by: (" 由 <@", "> 回答"),
    type_answer: "输入回答",
    your_answer: "你的回答",
    answer_label: "回答",
    answer_placeholder: "在这里输入你的回答...",
    submit: "提交",
    answered_by_context: "回答者：",
    tool_input: "工具输入",
    undelivered: (
        "我已完成，但没能在 Slack 中送达回答（错误编号 `",
        "`）。请让我重新发送。",
    ),
};

/// The words of `language` (`zh`, `zh-CN`, `zh-Hans`: Chinese; anything else: English).
pub fn for_language(language: Option<&str>) -> &'static Words {
    match language.map(|l| l.trim().to_ascii_lowercase()) {
        Some(l) if l == "zh" || l.starts_with("zh-") || l.starts_with("zh_") => &ZH,
        _ => &EN,
    }
}
