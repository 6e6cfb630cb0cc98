"""mlreaper core: discover -> signals -> decide -> act -> record -> notify."""

__version__ = "0.1.0"
