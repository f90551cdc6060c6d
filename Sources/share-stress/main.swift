import ToolSupport
import ShareQueueStress
import ShareQueueSystem

// Before any file is opened, so that none becomes standard input, output or error.
_ = Host.openClosedStandardDescriptors()
StressTool.main()
