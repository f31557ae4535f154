//! What the fake adapter's test binaries share: one typed call through the runtime port.

use actix::Addr;
use sergeant_messages::runtime::{RuntimeCall, RuntimeOperation};
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_runtime_adapters::fake::FakeAdapter;

/// Sends one CRI request to the adapter and unwraps the typed answer.
pub async fn call<R: RuntimeOperation>(
    node: &Addr<FakeAdapter>,
    request: R,
) -> Result<R::Response, RuntimeError> {
    let answer = node
        .send(RuntimeCall(request.into_request()))
        .await
        .expect("the fake adapter is alive");
    R::from_response(answer?)
}
