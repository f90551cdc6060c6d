import ShareQueueCLI

HostDrainTool.main()
