use super::*;
use crate::testing::{pod_with, resources, with_pod_resources};

const NANO: i128 = 1_000_000_000;
const GI: i128 = (1 << 30) * NANO;

fn cpu(milli: i128) -> i128 {
    milli * 1_000_000
}

fn sidecar(mut container: Container) -> Container {
    container.restart_policy = Some("Always".into());
    container
}

#[test]
fn regular_containers_add_up_and_init_containers_set_a_floor() {
    let pod = pod_with(
        vec![
            resources("a", &[("cpu", "100m"), ("memory", "1Gi")], &[("cpu", "1")]),
            resources("b", &[("cpu", "200m"), ("dummy.com/dummy", "1")], &[]),
        ],
        vec![resources("i", &[("cpu", "500m"), ("memory", "512Mi")], &[])],
    );
    let requests = pod_requests(&pod);
    assert_eq!(requests.get("cpu"), Some(&cpu(500)));
    assert_eq!(requests.get("memory"), Some(&GI));
    assert_eq!(requests.get("dummy.com/dummy"), Some(&NANO));
    assert_eq!(pod_limits(&pod).get("cpu"), Some(&cpu(1000)));
    assert_eq!(
        to_list(&requests).get("cpu").map(|q| q.0.as_str()),
        Some("500m")
    );
    assert_eq!(
        to_list(&requests).get("memory").map(|q| q.0.as_str()),
        Some("1Gi")
    );
    assert_eq!(
        (binary(33_554_432), binary(3072), binary(1536), binary(0)),
        ("32Mi".into(), "3Ki".into(), "1536".into(), "0".into())
    );
}

#[test]
fn sidecars_add_to_the_pod_and_to_every_later_init_container() {
    let pod = pod_with(
        vec![resources("a", &[("cpu", "100m")], &[])],
        vec![
            sidecar(resources("s", &[("cpu", "200m")], &[])),
            resources("i", &[("cpu", "250m")], &[]),
        ],
    );
    // Regular 100m + sidecar 200m = 300m; the init container runs beside the sidecar: 450m.
    assert_eq!(pod_requests(&pod).get("cpu"), Some(&cpu(450)));
}

#[test]
fn pod_level_resources_replace_the_totals_they_set_and_overhead_is_added() {
    let pod = pod_with(
        vec![resources(
            "a",
            &[("memory", "100Mi"), ("ephemeral-storage", "1Gi")],
            &[("memory", "100Mi")],
        )],
        vec![],
    );
    assert!(pod_level(&pod).is_none());
    let mut pod = with_pod_resources(pod, &[("cpu", "2")], &[("cpu", "3"), ("memory", "1Gi")]);
    assert!(pod_level(&pod).is_some());
    let requests = pod_requests(&pod);
    assert_eq!(requests.get("cpu"), Some(&cpu(2000)));
    assert_eq!(requests.get("memory"), Some(&((100 << 20) * NANO)));
    assert_eq!(requests.get("ephemeral-storage"), Some(&GI));
    let limits = pod_limits(&pod);
    assert_eq!(
        (limits.get("cpu"), limits.get("memory")),
        (Some(&cpu(3000)), Some(&GI))
    );
    pod.spec.as_mut().unwrap().overhead =
        Some([("cpu".to_owned(), ApiQuantity("250m".into()))].into());
    assert_eq!(pod_requests(&pod).get("cpu"), Some(&cpu(2250)));
    assert_eq!(pod_limits(&pod).get("cpu"), Some(&cpu(3250)));
    assert_eq!(pod_limits(&pod).get("memory"), Some(&GI));
}

#[test]
fn only_cpu_memory_or_hugepages_make_pod_level_resources() {
    let pod = pod_with(vec![resources("a", &[], &[])], vec![]);
    let storage_only = with_pod_resources(pod.clone(), &[("ephemeral-storage", "1Gi")], &[]);
    assert!(pod_level(&storage_only).is_none());
    let huge = with_pod_resources(pod, &[], &[("hugepages-2Mi", "4Mi")]);
    assert!(pod_level(&huge).is_some());
    assert_eq!(amount(None, "cpu"), None);
    assert_eq!((milli(cpu(250)), units(GI)), (250, 1 << 30));
}

#[test]
fn with_the_gate_off_a_pod_is_seen_without_its_pod_level_resources() {
    let containers = vec![resources("a", &[("cpu", "100m")], &[("cpu", "200m")])];
    let pod = Arc::new(with_pod_resources(
        pod_with(containers, vec![]),
        &[("cpu", "1")],
        &[("cpu", "2"), ("memory", "1Gi")],
    ));
    assert!(pod_level(&pod).is_some());
    let bare = without_pod_level(&pod);
    assert!(pod_level(&bare).is_none());
    assert_eq!(pod_limits(&bare).get("cpu"), Some(&cpu(200)));
    assert_eq!(pod_limits(&bare).get("memory"), None);
    assert!(
        pod.spec
            .as_ref()
            .and_then(|s| s.resources.as_ref())
            .is_some(),
        "the shared pod is untouched"
    );

    let plain = Arc::new(pod_with(vec![resources("a", &[], &[])], vec![]));
    assert!(
        Arc::ptr_eq(&plain, &without_pod_level(&plain)),
        "nothing to drop: the same pod"
    );
}
