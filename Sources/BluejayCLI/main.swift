print("bluejay")
