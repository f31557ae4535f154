//! sergeant's runtime adapters. The CRI client is being built (issue: the CRI runtime adapter);
//! nothing here is used by the agent yet.
