//! The static pod source against a real directory: pods appear, change and disappear as
//! files do, a broken manifest is rejected alone, hidden files are ignored, and a live change
//! of `staticPodPath` switches directories.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use sergeant_actors::config_feed::{feed, ConfigFeed};
use sergeant_actors::sources::StaticPodSource;
use sergeant_config::{FlagOverrides, NodeConfig};
use sergeant_messages::pods::{PodSource, SourceSnapshot};
use sergeant_supervisor::ChildEnv;
use tokio::sync::watch;

/// How long a change may take to show up (the source promises about a second).
const DEADLINE: Duration = Duration::from_secs(3);

fn manifest(name: &str, image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: main\n    image: {image}\n"
    )
}

fn config(dir: &Path) -> NodeConfig {
    let text = format!(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: {}\nfileCheckFrequency: 20s\n",
        dir.display()
    );
    let flags = FlagOverrides {
        hostname_override: Some("node-a".into()),
        ..FlagOverrides::default()
    };
    NodeConfig::parse(&text, "test-config", &flags).unwrap()
}

fn start(dir: &Path) -> (ConfigFeed, watch::Receiver<SourceSnapshot>) {
    let config = feed("test-config".into(), config(dir));
    let (out, snapshots) = watch::channel(SourceSnapshot::unsynced(PodSource::File));
    StaticPodSource::new(&ChildEnv::new("root/pods/sources"), config.subscribe(), out).start();
    (config, snapshots)
}

/// Waits (by awaiting changes, up to the deadline) for a snapshot that satisfies `ready`.
async fn until(
    snapshots: &mut watch::Receiver<SourceSnapshot>,
    what: &str,
    ready: impl FnMut(&SourceSnapshot) -> bool,
) -> SourceSnapshot {
    let seen = match tokio::time::timeout(DEADLINE, snapshots.wait_for(ready)).await {
        Ok(Ok(snapshot)) => Some(snapshot.clone()),
        Ok(Err(_)) => panic!("the source went away while waiting for {what}"),
        Err(_) => None,
    };
    seen.unwrap_or_else(|| {
        panic!(
            "{what}: not seen within {DEADLINE:?}; last: {:?}",
            *snapshots.borrow()
        )
    })
}

fn names(snapshot: &SourceSnapshot) -> Vec<String> {
    snapshot
        .pods
        .iter()
        .filter_map(|pod| pod.metadata.name.clone())
        .collect()
}

fn uid_of(snapshot: &SourceSnapshot, name: &str) -> Option<String> {
    snapshot
        .pods
        .iter()
        .find(|pod| pod.metadata.name.as_deref() == Some(name))
        .and_then(|pod| pod.metadata.uid.clone())
}

#[test]
fn follows_the_directory() {
    actix_rt::System::new().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), manifest("alpha", "busybox:1.36")).unwrap();
        std::fs::write(
            dir.path().join(".hidden.yaml"),
            manifest("hidden", "busybox"),
        )
        .unwrap();
        let (_config, mut snapshots) = start(dir.path());

        let first = until(&mut snapshots, "the first sync", |s| s.synced).await;
        assert_eq!(names(&first), ["alpha-node-a"]);
        assert!(first.rejected.is_empty());
        let pod = &first.pods[0];
        assert_eq!(pod.metadata.namespace.as_deref(), Some("default"));
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.node_name.as_deref(), Some("node-a"));
        let alpha_uid = uid_of(&first, "alpha-node-a").unwrap();

        std::fs::write(dir.path().join("b.yaml"), manifest("beta", "nginx:1.27")).unwrap();
        let added = until(&mut snapshots, "b.yaml added", |s| s.pods.len() == 2).await;
        assert_eq!(names(&added), ["alpha-node-a", "beta-node-a"]);
        assert_eq!(uid_of(&added, "alpha-node-a"), Some(alpha_uid.clone()));

        std::fs::write(dir.path().join("a.yaml"), manifest("alpha", "busybox:1.37")).unwrap();
        let changed = until(&mut snapshots, "a.yaml changed", |s| {
            uid_of(s, "alpha-node-a").is_some_and(|uid| uid != alpha_uid)
        })
        .await;
        assert_eq!(names(&changed), ["alpha-node-a", "beta-node-a"]);
        let image = changed.pods[0].spec.as_ref().unwrap().containers[0]
            .image
            .clone();
        assert_eq!(image.as_deref(), Some("busybox:1.37"));

        std::fs::remove_file(dir.path().join("b.yaml")).unwrap();
        let removed = until(&mut snapshots, "b.yaml removed", |s| s.pods.len() == 1).await;
        assert_eq!(names(&removed), ["alpha-node-a"]);
        assert!(removed.synced);
    });
}

#[test]
fn a_broken_manifest_is_rejected_alone() {
    actix_rt::System::new().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), manifest("alpha", "busybox")).unwrap();
        std::fs::write(dir.path().join("c.yaml"), manifest("gamma", "busybox")).unwrap();
        let broken = manifest("broken", "busybox").replace("    image:", "    imagee:");
        std::fs::write(dir.path().join("b.yaml"), broken).unwrap();
        let (_config, mut snapshots) = start(dir.path());

        let snapshot = until(&mut snapshots, "the first sync", |s| s.synced).await;
        assert_eq!(names(&snapshot), ["alpha-node-a", "gamma-node-a"]);
        let file = dir.path().join("b.yaml").display().to_string();
        assert_eq!(snapshot.rejected.len(), 1);
        assert_eq!(snapshot.rejected[0].origin, file);
        assert_eq!(
            snapshot.rejected[0].error,
            format!(
                "{file}:8: spec.containers[0].imagee: unknown field \"imagee\" (did you mean \"image\"?)"
            )
        );

        // Fixing it brings the pod in and clears the rejection; the others stay.
        std::fs::write(dir.path().join("b.yaml"), manifest("broken", "busybox")).unwrap();
        let fixed = until(&mut snapshots, "b.yaml fixed", |s| s.rejected.is_empty()).await;
        assert_eq!(names(&fixed), ["alpha-node-a", "broken-node-a", "gamma-node-a"]);
    });
}

#[test]
fn follows_a_live_change_of_static_pod_path() {
    actix_rt::System::new().block_on(async {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        std::fs::write(first.path().join("a.yaml"), manifest("alpha", "busybox")).unwrap();
        std::fs::write(second.path().join("z.json"), json_manifest("zulu")).unwrap();
        let (config, mut snapshots) = start(first.path());
        let snapshot = until(&mut snapshots, "the first sync", |s| s.synced).await;
        assert_eq!(names(&snapshot), ["alpha-node-a"]);

        let moved = Arc::new(self::config(second.path()));
        config.send_modify(|state| {
            state.generation += 1;
            state.active = moved;
        });
        let switched = until(&mut snapshots, "the new directory", |s| {
            names(s) == ["zulu-node-a"]
        })
        .await;
        assert!(switched.rejected.is_empty());

        // Unset: synced, no pods.
        let mut unset = (*config.borrow().active).clone();
        unset.kubelet.static_pod_path = None;
        config.send_modify(|state| state.active = Arc::new(unset));
        until(&mut snapshots, "no static pods", |s| {
            s.synced && s.pods.is_empty()
        })
        .await;
    });
}

#[test]
fn a_missing_directory_is_synced_and_empty_until_it_appears() {
    actix_rt::System::new().block_on(async {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("manifests");
        let (_config, mut snapshots) = start(&dir);
        let snapshot = until(&mut snapshots, "the first sync", |s| s.synced).await;
        assert!(snapshot.pods.is_empty());
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.yaml"), manifest("alpha", "busybox")).unwrap();
        let appeared = until(&mut snapshots, "the new directory's pod", |s| {
            !s.pods.is_empty()
        })
        .await;
        assert_eq!(names(&appeared), ["alpha-node-a"]);
    });
}

fn json_manifest(name: &str) -> String {
    format!(
        r#"{{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {{"name": "{name}"}},
  "spec": {{"containers": [{{"name": "main", "image": "busybox"}}]}}
}}"#
    )
}
