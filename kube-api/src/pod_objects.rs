//! Reading what a pod refers to — its config maps and secrets (with their types, which pull
//! secrets are read by) through the node's [`ObjectCache`](crate::ObjectCache) as the configured strategy says,
//! service account tokens and the services whose variables its containers get from the API
//! server — with the node's own credentials, into the [`PodObjects`] the pure pod builders
//! take. A read that fails is recorded, so only the volume or container that needs the object
//! waits; one the Node authorizer refuses because it has not seen the pod's binding yet is
//! retried first (`forbidden`).

use k8s_openapi::api::core::v1::{PodSpec, Service};
use kube::api::ListParams;
use kube::{Api, Client};
use sergeant_messages::pods::core::Pod;

use super::failure::api_failure;
use super::object_cache::{Fetched, ObjectUser};
use super::token::{TokenCache, TokenOwner};
use sergeant_core::spec::{
    linked_services, references, ApiRequest, LinkedService, ObjectError, PodObjects,
};

/// Fetches every object `pod` refers to (see [`references`]): its config maps and secrets
/// through `user`, which registers them as the pod's first (the objects a pod no longer refers
/// to are no longer its); tokens from `tokens`, which requests new ones when due and forgets
/// those no longer used.
pub async fn fetch_pod_objects(
    client: &Client,
    user: &ObjectUser,
    pod: &Pod,
    tokens: &mut TokenCache,
) -> PodObjects {
    let refs = references(pod);
    let meta = &pod.metadata;
    let namespace = meta.namespace.as_deref().unwrap_or("default");
    user.register(namespace, &refs.objects);
    let mut objects = PodObjects::managed();
    for (kind, name) in &refs.objects {
        match user.read(*kind, namespace, name).await {
            Ok(Some(Fetched {
                data, secret_type, ..
            })) => {
                if let Some(secret_type) = secret_type {
                    objects.insert_secret_type(name, secret_type);
                }
                objects.insert(*kind, name, Some(data));
            }
            Ok(None) => objects.insert(*kind, name, None),
            Err(error) => objects.insert_failure(*kind, name, error),
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
    objects.insert_services(services(client, user, pod, namespace).await);
    objects
}

/// The services `pod` links to (see [`linked_services`]): the services of its namespace
/// unless it turns links off, and the API server's own, `default/kubernetes`; from the watch
/// of every service (see [`ObjectUser::services`]), or listed while it has no first list.
async fn services(
    client: &Client,
    user: &ObjectUser,
    pod: &Pod,
    namespace: &str,
) -> Result<Vec<LinkedService>, ObjectError> {
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let links = spec.enable_service_links != Some(false);
    if let Some((listed, master)) = user.services(namespace, links).await {
        return Ok(linked_services(spec, &listed, master.as_ref()));
    }
    let failed = |request: ApiRequest| {
        move |e: kube::Error| ObjectError::Api {
            request,
            failure: api_failure(&e),
        }
    };
    let listed = if !links {
        Vec::new()
    } else {
        Api::<Service>::namespaced(client.clone(), namespace)
            .list(&ListParams::default())
            .await
            .map_err(failed(ApiRequest::ListServices {
                namespace: namespace.to_owned(),
            }))?
            .items
    };
    let master = Api::<Service>::namespaced(client.clone(), "default")
        .get_opt("kubernetes")
        .await
        .map_err(failed(ApiRequest::ReadService {
            namespace: "default".to_owned(),
            name: "kubernetes".to_owned(),
        }))?;
    Ok(linked_services(spec, &listed, master.as_ref()))
}
