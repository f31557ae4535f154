//! The httpGet probe handler: one [`super::get`] whose answer is a verdict, as upstream's HTTP
//! prober decides it (a status from 200 to 399 passes; a redirect to another host passes with
//! a warning).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, HTTPGetAction};

use super::{get, HttpTarget};
use crate::Outcome;

/// GETs what `action` of `container` points at (the host defaulting to `pod_ip`), sending
/// `user_agent` unless the action sets one, within `timeout`.
pub async fn probe(
    action: &HTTPGetAction,
    container: &Container,
    pod_ip: Option<&str>,
    user_agent: &str,
    timeout: Duration,
) -> Outcome {
    let request = match HttpTarget::resolve(action, container, pod_ip, user_agent) {
        Ok(request) => request,
        Err(e) => return Outcome::Unknown(e.to_string()),
    };
    match get(&request, timeout).await {
        Err(e) => Outcome::Failure(e.to_string()),
        Ok(answer) if answer.redirect_not_followed.is_some() => Outcome::Warning(format!(
            "Probe terminated redirects, Response body: {}",
            answer.body
        )),
        Ok(answer) if (200..400).contains(&answer.status) => Outcome::Success(answer.body),
        Ok(answer) => Outcome::Failure(format!(
            "HTTP probe failed with statuscode: {}",
            answer.status
        )),
    }
}
