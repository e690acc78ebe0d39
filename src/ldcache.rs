//! Parser for glibc's /etc/ld.so.cache (filled in by the ldcache work).
