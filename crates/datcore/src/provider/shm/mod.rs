//! The `shm` provider: DAT between processes of one user on one host.
