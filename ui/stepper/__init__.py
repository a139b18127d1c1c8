"""The stepper (pages/stepper.py): its controller, URL, panels and pure views."""
