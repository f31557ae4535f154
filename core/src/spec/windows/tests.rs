//! Table tests of the Windows pod path: the CRI fields upstream's Windows kubelet fills for a
//! pod, computed here by the same rules, and the HostProcess pods the node refuses.

use std::path::PathBuf;

use k8s_cri::v1::{WindowsContainerResources, WindowsContainerSecurityContext};
use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, Pod, PodSecurityContext, SecurityContext, Volume, VolumeMount,
    WindowsSecurityContextOptions,
};

use super::*;
use crate::kind::ContainerKind;
use crate::spec::{container_config, sandbox_config, NodeImage, NodeOs, PodObjects};
use crate::testing::{node, pod_with, resources};
use crate::volumes::VolumePlan;

/// A credential spec as the gMSA webhook writes it into the pod (shortened).
const GMSA_POD: &str =
    r#"{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"GmsaName":"web"}}"#;
/// The node's resolver file (host-network pods inherit it).
const RESOLV_CONF: &str = "nameserver 192.0.2.53\n";
const GMSA_CONTAINER: &str =
    r#"{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"GmsaName":"db"}}"#;

fn options(
    user: Option<&str>,
    gmsa: Option<&str>,
    host_process: Option<bool>,
) -> WindowsSecurityContextOptions {
    WindowsSecurityContextOptions {
        run_as_user_name: user.map(Into::into),
        gmsa_credential_spec: gmsa.map(Into::into),
        host_process,
        ..Default::default()
    }
}

fn with_options(mut container: Container, options: WindowsSecurityContextOptions) -> Container {
    container.security_context = Some(SecurityContext {
        windows_options: Some(options),
        ..Default::default()
    });
    container
}

fn set_pod_options(pod: &mut Pod, options: WindowsSecurityContextOptions) {
    pod.spec.as_mut().expect("spec").security_context = Some(PodSecurityContext {
        windows_options: Some(options),
        ..Default::default()
    });
}

fn limits(cpu_milli: Option<i64>, memory_bytes: Option<i64>) -> Amounts {
    Amounts {
        cpu_milli,
        memory_bytes,
    }
}

#[test]
fn cpu_maximum_is_the_limits_share_of_the_node_in_hundredths_of_a_percent() {
    // (limit in millicores, logical processors, cpu_maximum)
    let cases: [(i64, u32, i64); 10] = [
        (500, 4, 1250),
        (1000, 4, 2500),
        (100, 3, 333),
        (1000, 1, 10_000),
        (4000, 4, 10_000),
        // Above the node: the whole node.
        (8000, 4, 10_000),
        // Below one step: the smallest step, never "no cap".
        (1, 64, 1),
        // Overflowing arithmetic on a hostile limit: the whole node.
        (i64::MAX, 4, 10_000),
        (i64::MAX / 10 + 1, 1, 10_000),
        // A node that reports no processors counts as one.
        (500, 0, 5000),
    ];
    for (milli, processors, expected) in cases {
        assert_eq!(
            cpu_maximum(milli, processors),
            expected,
            "{milli}m on {processors} processors"
        );
    }
}

#[test]
fn only_limits_become_job_object_limits() {
    // (limits, processors, expected resources)
    let cases = [
        (
            limits(Some(500), Some(256 << 20)),
            4,
            WindowsContainerResources {
                cpu_maximum: 1250,
                memory_limit_in_bytes: 256 << 20,
                ..Default::default()
            },
        ),
        (
            limits(Some(250), None),
            2,
            WindowsContainerResources {
                cpu_maximum: 1250,
                ..Default::default()
            },
        ),
        (
            limits(None, Some(1 << 30)),
            8,
            WindowsContainerResources {
                memory_limit_in_bytes: 1 << 30,
                ..Default::default()
            },
        ),
        (limits(None, None), 8, WindowsContainerResources::default()),
    ];
    for (amounts, processors, expected) in cases {
        let got = windows_resources(&amounts, processors);
        assert_eq!(got, expected, "{amounts:?} on {processors} processors");
        // Upstream never sets a weight (it would turn the hard cap off) nor a cpu count.
        assert_eq!((got.cpu_shares, got.cpu_count), (0, 0));
    }
}

/// The container security context of the first container of `pod` run from an image whose
/// user is `image_user`.
fn container_security(pod: &Pod, image_user: &ImageUser) -> WindowsContainerSecurityContext {
    let spec = pod.spec.as_ref().expect("spec");
    container_windows(
        "ns/web",
        spec,
        &spec.containers[0],
        &Amounts::default(),
        image_user,
        4,
    )
    .expect("a Windows config")
    .security_context
    .expect("a security context")
}

/// (pod options, container options, image user, run_as_username, credential_spec)
type UserCase<'a> = (
    Option<WindowsSecurityContextOptions>,
    Option<WindowsSecurityContextOptions>,
    &'a ImageUser,
    &'a str,
    &'a str,
);

#[test]
fn the_container_runs_as_the_image_user_unless_windows_options_name_another() {
    let image = ImageUser::Name("ContainerUser".into());
    let cases: [UserCase; 7] = [
        (None, None, &image, "ContainerUser", ""),
        (None, None, &ImageUser::Uid(0), "", ""),
        (
            Some(options(Some("ContainerAdministrator"), None, None)),
            None,
            &image,
            "ContainerAdministrator",
            "",
        ),
        (
            Some(options(Some("ContainerAdministrator"), None, None)),
            Some(options(Some("NT AUTHORITY\\NETWORK SERVICE"), None, None)),
            &image,
            "NT AUTHORITY\\NETWORK SERVICE",
            "",
        ),
        (
            Some(options(None, Some(GMSA_POD), None)),
            None,
            &image,
            "ContainerUser",
            GMSA_POD,
        ),
        // Field by field: the container's credential spec, the pod's user.
        (
            Some(options(
                Some("ContainerAdministrator"),
                Some(GMSA_POD),
                None,
            )),
            Some(options(None, Some(GMSA_CONTAINER), None)),
            &image,
            "ContainerAdministrator",
            GMSA_CONTAINER,
        ),
        (
            None,
            Some(options(None, Some(GMSA_CONTAINER), None)),
            &ImageUser::Uid(1000),
            "",
            GMSA_CONTAINER,
        ),
    ];
    for (index, (of_pod, of_container, image_user, user, credential_spec)) in
        cases.into_iter().enumerate()
    {
        let mut container = resources("app", &[], &[]);
        if let Some(own) = of_container {
            container = with_options(container, own);
        }
        let mut pod = pod_with(vec![container], vec![]);
        if let Some(of_pod) = of_pod {
            set_pod_options(&mut pod, of_pod);
        }
        let got = container_security(&pod, image_user);
        assert_eq!(
            got,
            WindowsContainerSecurityContext {
                run_as_username: user.into(),
                credential_spec: credential_spec.into(),
                host_process: false,
            },
            "case {index}"
        );
    }
}

/// A pod of `containers` (after `init`), on the host network when `host_network`, with the
/// pod-level `hostProcess` given.
fn host_process_case(
    init: Vec<Option<bool>>,
    containers: Vec<Option<bool>>,
    of_pod: Option<bool>,
    host_network: bool,
) -> Pod {
    let make = |prefix: &str, settings: Vec<Option<bool>>| -> Vec<Container> {
        settings
            .into_iter()
            .enumerate()
            .map(|(i, own)| {
                let container = resources(&format!("{prefix}{i}"), &[], &[]);
                match own {
                    Some(own) => with_options(container, options(None, None, Some(own))),
                    None => container,
                }
            })
            .collect()
    };
    let mut pod = pod_with(make("c", containers), make("i", init));
    if let Some(of_pod) = of_pod {
        set_pod_options(&mut pod, options(None, None, Some(of_pod)));
    }
    pod.spec.as_mut().expect("spec").host_network = Some(host_network);
    pod
}

/// (init, regular, pod-level hostProcess, hostNetwork, expected: HostProcess or the field at
/// fault)
type HostProcessCase = (
    Vec<Option<bool>>,
    Vec<Option<bool>>,
    Option<bool>,
    bool,
    Result<bool, &'static str>,
);

#[test]
fn host_process_pods_are_all_host_process_and_on_the_host_network() {
    const OK: Result<bool, &str> = Ok(true);
    const NOT: Result<bool, &str> = Ok(false);
    let cases: [HostProcessCase; 11] = [
        (vec![], vec![None], None, false, NOT),
        (vec![], vec![Some(false)], Some(false), false, NOT),
        (vec![], vec![None, None], Some(true), true, OK),
        (vec![Some(true)], vec![Some(true)], None, true, OK),
        (vec![None], vec![Some(true)], Some(true), true, OK),
        (
            vec![],
            vec![Some(true), Some(true)],
            None,
            false,
            Err("spec.hostNetwork"),
        ),
        (
            vec![],
            vec![None],
            Some(true),
            false,
            Err("spec.hostNetwork"),
        ),
        (
            vec![],
            vec![Some(true), None],
            None,
            true,
            Err("spec.containers[1].securityContext.windowsOptions.hostProcess"),
        ),
        (
            vec![None],
            vec![Some(true)],
            None,
            true,
            Err("spec.initContainers[0].securityContext.windowsOptions.hostProcess"),
        ),
        (
            vec![],
            vec![None, Some(false)],
            Some(true),
            true,
            Err("spec.containers[1].securityContext.windowsOptions.hostProcess"),
        ),
        (
            vec![],
            vec![Some(true)],
            Some(false),
            true,
            Err("spec.containers[0].securityContext.windowsOptions.hostProcess"),
        ),
    ];
    for (index, (init, containers, of_pod, host_network, expected)) in cases.into_iter().enumerate()
    {
        let pod = host_process_case(init, containers, of_pod, host_network);
        let got = host_process_pod("ns/web", pod.spec.as_ref().expect("spec"));
        match (got, expected) {
            (Ok(got), Ok(expected)) => assert_eq!(got, expected, "case {index}"),
            (Err(SpecError::Field { pod, field, reason }), Err(expected)) => {
                assert_eq!(pod, "ns/web", "case {index}");
                assert_eq!(field, expected, "case {index}: {reason}");
            }
            (got, expected) => panic!("case {index}: got {got:?}, expected {expected:?}"),
        }
    }
}

/// The node of the other tests, running Windows with 4 logical processors.
fn windows_node() -> crate::spec::NodeContext {
    let mut node = node(PathBuf::from("/r"));
    node.os = NodeOs::Windows;
    node.cpus = 4;
    node
}

/// A HostProcess pod with a gMSA and a user at pod level and a container with limits.
fn host_process_pod_with_limits() -> Pod {
    let container = resources(
        "agent",
        &[("cpu", "100m")],
        &[("cpu", "500m"), ("memory", "128Mi")],
    );
    let mut pod = pod_with(vec![container], vec![]);
    set_pod_options(
        &mut pod,
        options(Some("NT AUTHORITY\\SYSTEM"), Some(GMSA_POD), Some(true)),
    );
    pod.spec.as_mut().expect("spec").host_network = Some(true);
    pod
}

#[test]
fn a_windows_node_sends_the_windows_halves_and_no_cgroups() {
    let node = windows_node();
    let pod = host_process_pod_with_limits();
    let sandbox = sandbox_config(&pod, &node, 0, Some(RESOLV_CONF)).expect("sandbox config");
    let windows = sandbox.windows.expect("a Windows sandbox config");
    assert_eq!(
        windows.security_context,
        Some(k8s_cri::v1::WindowsSandboxSecurityContext {
            run_as_username: "NT AUTHORITY\\SYSTEM".into(),
            credential_spec: GMSA_POD.into(),
            host_process: true,
            namespace_options: None,
        })
    );
    let linux = sandbox.linux.expect("upstream sends the Linux half too");
    assert_eq!(linux.cgroup_parent, "", "Windows has no cgroups");

    let spec = pod.spec.as_ref().expect("spec");
    let plan = VolumePlan::for_pod(&pod, &node).expect("volume plan");
    let config = container_config(
        &pod,
        &spec.containers[0],
        ContainerKind::Regular,
        0,
        &node,
        &plan,
        None,
        &PodObjects::default(),
        &NodeImage {
            id: "sha256:c0".into(),
            user: ImageUser::Name("ContainerUser".into()),
        },
    )
    .expect("container config")
    .config;
    assert_eq!(config.linux, None, "no cgroup resources, no Linux security");
    assert_eq!(
        config.windows,
        Some(WindowsContainerConfig {
            resources: Some(WindowsContainerResources {
                cpu_maximum: 1250,
                memory_limit_in_bytes: 128 << 20,
                ..Default::default()
            }),
            security_context: Some(WindowsContainerSecurityContext {
                run_as_username: "NT AUTHORITY\\SYSTEM".into(),
                credential_spec: GMSA_POD.into(),
                host_process: true,
            }),
        })
    );
}

#[test]
fn a_windows_node_refuses_a_host_process_pod_off_the_host_network_before_any_sandbox() {
    let node = windows_node();
    let mut pod = host_process_pod_with_limits();
    pod.spec.as_mut().expect("spec").host_network = None;
    let refused = sandbox_config(&pod, &node, 0, Some(RESOLV_CONF));
    assert!(
        matches!(&refused, Err(SpecError::Field { field, .. }) if field == "spec.hostNetwork"),
        "{refused:?}"
    );
}

#[test]
fn a_linux_node_sends_no_windows_half() {
    let mut node = windows_node();
    node.os = NodeOs::Linux;
    let pod = host_process_pod_with_limits();
    let sandbox = sandbox_config(&pod, &node, 0, Some(RESOLV_CONF)).expect("sandbox config");
    assert_eq!(sandbox.windows, None);
    assert_ne!(sandbox.linux.expect("linux").cgroup_parent, "");
}

/// The mounts of the first container of `pod` on `node` with sandbox address `pod_ip`, as
/// (container path, host path) pairs, and its log path.
fn mounts_and_log(
    pod: &Pod,
    node: &crate::spec::NodeContext,
    pod_ip: Option<&str>,
) -> (Vec<(String, String)>, String) {
    let spec = pod.spec.as_ref().expect("spec");
    let plan = VolumePlan::for_pod(pod, node).expect("volume plan");
    let config = container_config(
        pod,
        &spec.containers[0],
        ContainerKind::Regular,
        2,
        node,
        &plan,
        pod_ip,
        &PodObjects::default(),
        &NodeImage {
            id: "sha256:c0".into(),
            user: ImageUser::Name(String::new()),
        },
    )
    .expect("container config")
    .config;
    let mounts = config
        .mounts
        .into_iter()
        .map(|m| (m.container_path, m.host_path))
        .collect();
    (mounts, config.log_path)
}

#[test]
fn a_windows_node_sends_drive_rooted_container_paths_and_backslashed_log_paths() {
    let node = windows_node();
    let pod = pod_with(vec![resources("app", &[], &[])], vec![]);
    let name = "app";
    let (mounts, log_path) = mounts_and_log(&pod, &node, Some("10.0.0.5"));
    let paths: Vec<&str> = mounts.iter().map(|(inside, _)| inside.as_str()).collect();
    assert_eq!(
        paths,
        ["c:/dev/termination-log", WINDOWS_ETC_HOSTS],
        "the termination log on drive c:, the hosts file where Windows keeps it"
    );
    assert_eq!(log_path, format!("{name}\\2.log"));

    let (mounts, _) = mounts_and_log(&host_process_pod_with_limits(), &node, None);
    let paths: Vec<&str> = mounts.iter().map(|(inside, _)| inside.as_str()).collect();
    assert_eq!(
        paths,
        ["c:/dev/termination-log"],
        "a HostProcess pod uses the host's hosts file"
    );

    let mut linux = windows_node();
    linux.os = NodeOs::Linux;
    let (mounts, log_path) = mounts_and_log(&pod, &linux, Some("10.0.0.5"));
    let paths: Vec<&str> = mounts.iter().map(|(inside, _)| inside.as_str()).collect();
    assert_eq!(paths, ["/dev/termination-log", "/etc/hosts"]);
    assert_eq!(log_path, format!("{name}/2.log"));
}

#[test]
fn a_windows_node_keeps_a_drive_mount_path_and_puts_a_relative_one_on_drive_c() {
    let mut app = resources("app", &[], &[]);
    app.volume_mounts = Some(
        [r"C:\scratch", "cache", "/rooted"]
            .iter()
            .enumerate()
            .map(|(index, path)| VolumeMount {
                name: format!("v{index}"),
                mount_path: (*path).to_owned(),
                ..VolumeMount::default()
            })
            .collect(),
    );
    let mut pod = pod_with(vec![app], vec![]);
    pod.spec.as_mut().expect("spec").volumes = Some(
        (0..3)
            .map(|index| Volume {
                name: format!("v{index}"),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Volume::default()
            })
            .collect(),
    );
    let (mounts, _) = mounts_and_log(&pod, &windows_node(), None);
    let paths: Vec<&str> = mounts.iter().map(|(inside, _)| inside.as_str()).collect();
    assert_eq!(
        paths,
        [
            r"C:\scratch",
            r"c:\cache",
            "/rooted",
            "c:/dev/termination-log"
        ]
    );
}
