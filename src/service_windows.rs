//! Running under the Windows service control manager (`--windows-service`): the process
//! connects to the manager, reports `StartPending` while the agent starts, `Running` once its
//! supervision tree is up, `StopPending` when the manager asks it to stop (or the system shuts
//! down) while the tree stops in order, and `Stopped` with the agent's exit code.

use std::ffi::OsString;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;
use windows_service::service::{
    ServiceControl, ServiceControlAccept, ServiceExitCode, ServiceState, ServiceStatus, ServiceType,
};
use windows_service::service_control_handler::{
    self, ServiceControlHandlerResult, ServiceStatusHandle,
};
use windows_service::{define_windows_service, service_dispatcher};

use super::{ServiceLink, ServiceReport};

/// The name the service runs under (one service per process: the manager does not check it).
const SERVICE_NAME: &str = "sergeant";
/// How long the manager waits for `Running` after `StartPending` before it gives up.
const START_WAIT: Duration = Duration::from_secs(60);

/// The agent, handed from `main` to the service's main thread.
type Agent = Box<dyn FnOnce(ServiceLink) -> u8 + Send>;

/// The agent to run, set before the dispatcher starts and taken once by [`service_main`].
static AGENT: Mutex<Option<Agent>> = Mutex::new(None);
/// The agent's exit code, for the process once the dispatcher returns.
static EXIT: Mutex<Option<u8>> = Mutex::new(None);

/// Why the agent cannot run as a service.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The service control manager did not take the process (it was not started as a
    /// service, say).
    #[error(
        "--windows-service: cannot connect to the service control manager (start sergeant.exe \
         as a registered service, `sc start NAME`, not from a console): {0}"
    )]
    Dispatcher(windows_service::Error),
}

/// Runs `agent` as the service's main, blocking until the service stopped; its exit code.
///
/// # Errors
/// When the process cannot connect to the service control manager.
pub fn run_as_service(
    agent: impl FnOnce(ServiceLink) -> u8 + Send + 'static,
) -> Result<u8, ServiceError> {
    *AGENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(agent));
    service_dispatcher::start(SERVICE_NAME, ffi_service_main).map_err(ServiceError::Dispatcher)?;
    Ok(EXIT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .unwrap_or(1))
}

define_windows_service!(ffi_service_main, service_main);

/// The service's main, on the dispatcher's thread: registers for stop requests, runs the
/// agent, reports `Stopped`.
fn service_main(_arguments: Vec<OsString>) {
    let Some(agent) = AGENT.lock().unwrap_or_else(PoisonError::into_inner).take() else {
        return;
    };
    let (stop, requests) = mpsc::unbounded_channel();
    let handler = move |control| match control {
        ServiceControl::Stop => {
            let _ = stop.send("service stop");
            ServiceControlHandlerResult::NoError
        }
        ServiceControl::Shutdown | ServiceControl::Preshutdown => {
            let _ = stop.send("system shutdown");
            ServiceControlHandlerResult::NoError
        }
        ServiceControl::Interrogate => ServiceControlHandlerResult::NoError,
        _ => ServiceControlHandlerResult::NotImplemented,
    };
    let handle = match service_control_handler::register(SERVICE_NAME, handler) {
        Ok(handle) => handle,
        Err(err) => {
            eprintln!("sergeant: --windows-service: cannot register the control handler: {err}");
            *EXIT.lock().unwrap_or_else(PoisonError::into_inner) = Some(1);
            return;
        }
    };
    let status = Status { handle };
    status.set(
        ServiceState::StartPending,
        START_WAIT,
        ServiceExitCode::NO_ERROR,
    );
    let code = agent(ServiceLink {
        stop: requests,
        report: Box::new(status),
    });
    let exit_code = match code {
        0 => ServiceExitCode::NO_ERROR,
        code => ServiceExitCode::ServiceSpecific(u32::from(code)),
    };
    status.set(ServiceState::Stopped, Duration::ZERO, exit_code);
    *EXIT.lock().unwrap_or_else(PoisonError::into_inner) = Some(code);
}

/// The service's status handle, reporting each state.
#[derive(Debug, Clone, Copy)]
struct Status {
    handle: ServiceStatusHandle,
}

impl Status {
    fn set(&self, state: ServiceState, wait_hint: Duration, exit_code: ServiceExitCode) {
        let pending = matches!(
            state,
            ServiceState::StartPending | ServiceState::StopPending
        );
        let controls_accepted = if state == ServiceState::Running {
            ServiceControlAccept::STOP | ServiceControlAccept::SHUTDOWN
        } else {
            ServiceControlAccept::empty()
        };
        let reported = self.handle.set_service_status(ServiceStatus {
            service_type: ServiceType::OWN_PROCESS,
            current_state: state,
            controls_accepted,
            exit_code,
            checkpoint: u32::from(pending),
            wait_hint,
            process_id: None,
        });
        match reported {
            Ok(()) => tracing::info!("service: reported {state:?}"),
            Err(err) => tracing::warn!("service: {state:?} not reported: {err}"),
        }
    }
}

impl ServiceReport for Status {
    fn running(&self) {
        self.set(
            ServiceState::Running,
            Duration::ZERO,
            ServiceExitCode::NO_ERROR,
        );
    }

    fn stopping(&self, wait: Duration) {
        self.set(ServiceState::StopPending, wait, ServiceExitCode::NO_ERROR);
    }
}
