import ShareAppend

ShareAppendTool.main()
