// The Bluejay module.
