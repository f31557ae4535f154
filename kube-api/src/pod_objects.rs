//! Reading what a pod refers to from the API server — its config maps, secrets (with their
//! types, which pull secrets are read by), service account tokens and the services whose
//! variables its containers get — with the node's own credentials, into the [`PodObjects`] the
//! pure pod builders take. A read that fails is
//! recorded, so only the volume or container that needs the object waits; one the Node
//! authorizer refuses because it has not seen the pod's binding yet is retried first
//! ([`retry_forbidden`]).

use k8s_openapi::api::core::v1::{ConfigMap, PodSpec, Secret, Service};
use kube::api::ListParams;
use kube::{Api, Client};
use sergeant_messages::pods::core::Pod;

use super::forbidden::retry_forbidden;
use super::token::{TokenCache, TokenOwner};
use sergeant_core::spec::{
    linked_services, references, LinkedService, ObjectData, ObjectKind, PodObjects,
};

/// Fetches every object `pod` refers to (see [`references`]); tokens come from `tokens`, which
/// requests new ones when due and forgets those no longer used.
pub async fn fetch_pod_objects(client: &Client, pod: &Pod, tokens: &mut TokenCache) -> PodObjects {
    let refs = references(pod);
    let meta = &pod.metadata;
    let namespace = meta.namespace.as_deref().unwrap_or("default");
    let mut objects = PodObjects::managed();
    for (kind, name) in &refs.objects {
        match read(client, namespace, *kind, name).await {
            Ok(Some((data, Some(secret_type)))) => {
                objects.insert_secret_type(name, secret_type);
                objects.insert(*kind, name, Some(data));
            }
            Ok(found) => objects.insert(*kind, name, found.map(|(data, _)| data)),
            Err(reason) => objects.insert_failure(*kind, name, reason),
        }
    }
    let owner = TokenOwner {
        namespace,
        name: meta.name.as_deref().unwrap_or_default(),
        uid: meta.uid.as_deref().unwrap_or_default(),
    };
    for key in &refs.tokens {
        let token = tokens.token(client, owner, key).await;
        objects.insert_token(key.clone(), token);
    }
    tokens.retain(&refs.tokens);
    objects.insert_services(services(client, pod, namespace).await);
    objects
}

/// The services `pod` links to (see [`linked_services`]): the services of its namespace, listed
/// unless it turns links off, and the API server's own, `default/kubernetes`.
async fn services(
    client: &Client,
    pod: &Pod,
    namespace: &str,
) -> Result<Vec<LinkedService>, String> {
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let listed = if spec.enable_service_links == Some(false) {
        Vec::new()
    } else {
        Api::<Service>::namespaced(client.clone(), namespace)
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("listing the services of namespace {namespace}: {e}"))?
            .items
    };
    let master = Api::<Service>::namespaced(client.clone(), "default")
        .get_opt("kubernetes")
        .await
        .map_err(|e| format!("reading service default/kubernetes: {e}"))?;
    Ok(linked_services(spec, &listed, master.as_ref()))
}

/// The keys of one object and, for a secret, its type; `None` when it does not exist.
async fn read(
    client: &Client,
    namespace: &str,
    kind: ObjectKind,
    name: &str,
) -> Result<Option<(ObjectData, Option<String>)>, String> {
    let what = format!("reading {} {namespace}/{name}", kind.noun());
    let failed = |e: kube::Error| format!("{what}: {e}");
    Ok(match kind {
        ObjectKind::ConfigMap => {
            let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
            retry_forbidden(&what, || api.get_opt(name))
                .await
                .map_err(failed)?
                .map(|config_map| (config_map_data(config_map), None))
        }
        ObjectKind::Secret => {
            let api = Api::<Secret>::namespaced(client.clone(), namespace);
            retry_forbidden(&what, || api.get_opt(name))
                .await
                .map_err(failed)?
                .map(|secret| {
                    let data = secret
                        .data
                        .into_iter()
                        .flatten()
                        .map(|(key, value)| (key, value.0))
                        .collect();
                    (data, secret.type_)
                })
        }
    })
}

/// A config map's `data` and `binaryData` as one map of bytes.
fn config_map_data(config_map: ConfigMap) -> ObjectData {
    let text = config_map
        .data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value.into_bytes()));
    let binary = config_map
        .binary_data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value.0));
    text.chain(binary).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn config_maps_merge_text_and_binary_keys() {
        let config_map = ConfigMap {
            data: Some([("a".to_owned(), "text".to_owned())].into()),
            binary_data: Some([("b".to_owned(), ByteString(vec![0, 255]))].into()),
            ..ConfigMap::default()
        };
        let data = config_map_data(config_map);
        assert_eq!(data["a"], b"text");
        assert_eq!(data["b"], [0, 255]);
    }
}
