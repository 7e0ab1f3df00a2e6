// The GATTProfiles module.
