//! Printing modules the way `sdy_opt` prints them. (Being written.)
