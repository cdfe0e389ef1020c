"""R2SM (modal/amodal queries): loader, gIoU / cIoU / AP / AR, report."""
