import ShareQueueCLI

ShareAppendTool.main()
