import HostDrain

HostDrainTool.main()
