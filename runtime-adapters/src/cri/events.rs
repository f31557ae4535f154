//! The container event subscription of a CRI runtime: opens `GetContainerEvents` and forwards
//! the gRPC stream into the subscriber's channel.
//!
//! A runtime without the call (containerd 1.6) refuses it at once, but one that has it may not
//! answer before its first event (gRPC servers send a stream's headers with its first message).
//! So the opening waits [`ANSWER_WINDOW`] for a refusal; silence means the stream is open and
//! quiet, and the rest of the opening goes on behind the subscriber's channel.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use sergeant_messages::container_events::{
    ContainerEventItem, ContainerEventStream, BUFFER, OPERATION,
};
use sergeant_messages::runtime::cri;
use sergeant_messages::runtime_error::RuntimeError;
use tokio::sync::mpsc;

use super::client::CriClient;
use super::error::from_status;

/// How long a subscription waits for the runtime to refuse `GetContainerEvents` before it
/// counts the stream as open.
const ANSWER_WINDOW: Duration = Duration::from_secs(2);

/// The work that feeds a subscription's channel; it ends with the stream, or when the
/// subscriber drops its end.
pub(super) type Feed = Pin<Box<dyn Future<Output = ()>>>;

/// Opens the event stream through `client`; answers the subscriber's end and the feed that
/// fills it, to run for as long as the adapter lives.
///
/// # Errors
/// The runtime's refusal within [`ANSWER_WINDOW`]: `Unimplemented` on runtimes without the
/// call, `Unavailable` when the runtime cannot be reached.
pub(super) async fn open(client: CriClient) -> Result<(ContainerEventStream, Feed), RuntimeError> {
    let mut opening = Box::pin(async move { client.call(cri::GetEventsRequest {}).await });
    let opened = match tokio::time::timeout(ANSWER_WINDOW, &mut opening).await {
        Ok(answer) => Some(answer?),
        Err(_quiet) => None,
    };
    let (events, stream) = mpsc::channel(BUFFER);
    let feed = async move {
        let opened = match opened {
            Some(opened) => Ok(opened),
            None => tokio::select! {
                answer = opening => answer,
                () = events.closed() => return,
            },
        };
        match opened {
            Ok(grpc) => forward(grpc, events).await,
            Err(err) => drop(events.send(Err(err)).await),
        }
    };
    Ok((stream, Box::pin(feed)))
}

/// Passes each event of `grpc` on to `events`, then the error that ended the stream.
async fn forward(
    mut grpc: tonic::Streaming<cri::ContainerEventResponse>,
    events: mpsc::Sender<ContainerEventItem>,
) {
    loop {
        let item = tokio::select! {
            message = grpc.message() => match message {
                Ok(Some(event)) => Ok(event),
                Ok(None) => Err(RuntimeError::Unavailable {
                    operation: OPERATION,
                    message: "the runtime ended the event stream".to_owned(),
                }),
                Err(status) => Err(from_status(OPERATION, &status)),
            },
            () = events.closed() => return,
        };
        let last = item.is_err();
        if events.send(item).await.is_err() || last {
            return;
        }
    }
}
