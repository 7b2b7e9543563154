//! The dat.conf static registry and the built-in providers.
