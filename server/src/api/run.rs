//! `POST /run/{namespace}/{pod}/{container}?cmd=...`: runs a command in the container and
//! answers with its output (upstream's `/run`, a synchronous exec).

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sergeant_messages::runtime::cri;

use super::target::current_container_id;
use crate::ServerDeps;

/// How long the command may run.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The handler.
pub async fn run(
    State(deps): State<ServerDeps>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let Some(cmd) = params.get("cmd").filter(|c| !c.trim().is_empty()) else {
        return (StatusCode::BAD_REQUEST, "cmd: a command is required\n").into_response();
    };
    let id = match current_container_id(&deps, &namespace, &pod, &container).await {
        Ok(id) => id,
        Err((status, message)) => return (status, format!("{message}\n")).into_response(),
    };
    let answer = deps
        .port
        .call(cri::ExecSyncRequest {
            container_id: id,
            cmd: cmd.split_whitespace().map(str::to_owned).collect(),
            timeout: i64::try_from(RUN_TIMEOUT.as_secs()).unwrap_or(60),
        })
        .await;
    match answer {
        Ok(answer) => {
            let mut output = answer.stdout;
            output.extend(answer.stderr);
            output.into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}
