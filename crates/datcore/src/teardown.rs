//! Freeing objects by handle in dependency order, for an abrupt `dat_ia_close`.

use crate::handle::{self, Handle, HandleType};
use crate::{cno, endpoint, evd, lmr, pz, rmr, service_point as sp, srq};

/// Frees every handle in `handles`, children before parents. Errors are logged and skipped:
/// an abrupt close always completes.
pub fn free_all(handles: &[Handle]) {
    use HandleType::*;
    let order = [Cr, Rsp, Psp, Ep, Rmr, Lmr, Srq, Evd, Cno, Pz];
    for ty in order {
        for &h in handles.iter().filter(|h| handle::type_of(**h) == Some(ty)) {
            let r = match ty {
                Cr => sp::reject(h, &[]),
                Rsp => sp::free_rsp(h),
                Psp => sp::free_psp(h),
                Ep => endpoint::free(h),
                Rmr => rmr::free(h),
                Lmr => lmr::free(h),
                Srq => srq::free(h),
                Evd => free_evd_forced(h),
                Cno => cno::free(h),
                Pz => pz::free(h),
                // The IA owns neither directly: an AH goes with its EP.
                Ia | Ah => Ok(()),
            };
            if let Err(e) = r {
                tracing::warn!(?h, ?e, "abrupt close: freeing {ty:?} failed");
            }
        }
    }
}

fn free_evd_forced(h: Handle) -> crate::DatResult<()> {
    evd::free_evd(h, true)
}
