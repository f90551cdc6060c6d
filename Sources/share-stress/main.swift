import ShareQueueStress

StressTool.main()
