//! The field names a manifest may use at a given path, read from the pod type itself: a probe
//! deserializer walks the path into `Pod` and records the field list serde hands to the
//! struct found there. This is what "did you mean" suggestions are chosen from, so they are
//! exactly the fields k8s-openapi knows, with no hand-kept table to drift.

use k8s_openapi::api::core::v1::Pod;
use serde::de::value::{Error, StringDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde::Deserialize;

use crate::located::{FieldPath, Segment};

/// The fields of the object at `path` in a pod (empty when the path does not lead to an
/// object with named fields, e.g. into a label map).
pub(crate) fn known_fields(path: &FieldPath) -> &'static [&'static str] {
    let mut found = None;
    // The probe always ends in an error: it only walks far enough to see the field list.
    let _ = Pod::deserialize(Probe {
        rest: path.segments(),
        found: &mut found,
    });
    found.unwrap_or(&[])
}

/// Deserializes nothing: follows `rest` into the type being deserialized and records the
/// field list of the struct at its end.
struct Probe<'p> {
    rest: &'p [Segment],
    found: &'p mut Option<&'static [&'static str]>,
}

fn stop<T>() -> Result<T, Error> {
    Err(de::Error::custom("probe stops here"))
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        stop()
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.rest.split_first() {
            None => {
                *self.found = Some(fields);
                stop()
            }
            Some((Segment::Key(key), rest)) => visitor.visit_map(OneEntry {
                key: Some(key.clone()),
                value: Some(Probe {
                    rest,
                    found: self.found,
                }),
            }),
            Some((Segment::Index(_), _)) => stop(),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.rest.split_first() {
            Some((Segment::Key(key), rest)) => visitor.visit_map(OneEntry {
                key: Some(key.clone()),
                value: Some(Probe {
                    rest,
                    found: self.found,
                }),
            }),
            _ => stop(),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.rest.split_first() {
            Some((Segment::Index(_), rest)) => visitor.visit_seq(OneElement(Some(Probe {
                rest,
                found: self.found,
            }))),
            _ => stop(),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct enum identifier ignored_any
    }
}

/// A map with the one key the probe follows.
struct OneEntry<'p> {
    key: Option<String>,
    value: Option<Probe<'p>>,
}

impl<'de> MapAccess<'de> for OneEntry<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.key.take() {
            Some(key) => {
                let key: StringDeserializer<Error> = key.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(probe) => seed.deserialize(probe),
            None => stop(),
        }
    }
}

/// A list with the one item the probe follows.
struct OneElement<'p>(Option<Probe<'p>>);

impl<'de> SeqAccess<'de> for OneElement<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.0.take() {
            Some(probe) => seed.deserialize(probe).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_fields_of_nested_objects() {
        let container = FieldPath::of(&["spec", "containers"]).index(0);
        let fields = known_fields(&container);
        assert!(fields.contains(&"image"), "{fields:?}");
        assert!(fields.contains(&"imagePullPolicy"));
        assert!(known_fields(&FieldPath::default()).contains(&"metadata"));
        let probe = container.key("livenessProbe").key("httpGet");
        assert!(known_fields(&probe).contains(&"port"));
    }

    #[test]
    fn maps_and_scalars_have_no_fields() {
        assert!(known_fields(&FieldPath::of(&["metadata", "labels"])).is_empty());
        assert!(known_fields(&FieldPath::of(&["metadata", "name"])).is_empty());
    }
}
