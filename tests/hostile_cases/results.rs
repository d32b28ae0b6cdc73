//! (filled in by the issue 26 work)
